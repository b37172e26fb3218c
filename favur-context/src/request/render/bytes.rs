//! [`Body`]: a rendered request's JSON bytes, each element serialized once.
//!
//! A [`Renderer`](super::Renderer) keeps the messages it rendered up to its last settled
//! point; the bytes of those messages cannot change either. A `Body` keeps the bytes of
//! one JSON array (inside a fixed head and tail: `[`…`]`, or `{"messages":[`…`]}`) and
//! where each element ends, so a request serializes only the elements rendered since
//! the last one.

use serde_json::Value;

/// The bytes of `head`, the elements of one array joined by `,`, and `tail`.
#[derive(Debug, Default)]
pub(super) struct Body {
    bytes: Vec<u8>,
    /// Where each element's bytes end in `bytes`.
    ends: Vec<usize>,
    /// How many leading elements still hold the bytes written for them (0: write the
    /// head again, too).
    valid: usize,
}

impl Body {
    /// At most the first `n` elements are unchanged since the bytes were written.
    pub(super) fn keep(&mut self, n: usize) {
        self.valid = self.valid.min(n);
    }

    /// The bytes of `head`, `items` and `tail`, writing only the elements after the
    /// unchanged ones (and the head when none is unchanged).
    pub(super) fn write(
        &mut self,
        head: impl FnOnce(&mut Vec<u8>),
        items: &[Value],
        tail: &[u8],
    ) -> &[u8] {
        let valid = self.valid.min(items.len());
        match valid.checked_sub(1).and_then(|last| self.ends.get(last)) {
            Some(&end) => {
                self.bytes.truncate(end);
                self.ends.truncate(valid);
            }
            None => {
                self.bytes.clear();
                self.ends.clear();
                head(&mut self.bytes);
            }
        }
        let from = self.ends.len();
        for (i, item) in items.iter().enumerate().skip(from) {
            if i > 0 {
                self.bytes.push(b',');
            }
            // Writing a `Value` into a `Vec` cannot fail: the writer never errors and every
            // map key of a `Value` is a string.
            let _ = serde_json::to_writer(&mut self.bytes, item);
            self.ends.push(self.bytes.len());
        }
        self.bytes.extend_from_slice(tail);
        self.valid = items.len();
        &self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn array(body: &mut Body, items: &[Value]) -> Vec<u8> {
        body.write(|b| b.push(b'['), items, b"]").to_vec()
    }

    #[test]
    fn equals_to_vec_as_the_array_grows_and_shrinks() {
        let mut body = Body::default();
        let mut items = Vec::new();
        assert_eq!(array(&mut body, &items), b"[]");
        for i in 0..5 {
            items.push(json!({"role": "user", "content": format!("step {i}")}));
            body.keep(items.len() - 1);
            assert_eq!(
                array(&mut body, &items),
                serde_json::to_vec(&items).unwrap()
            );
        }
        // The last two replaced: only what is kept stays.
        items.truncate(3);
        items.push(json!("other"));
        body.keep(3);
        assert_eq!(
            array(&mut body, &items),
            serde_json::to_vec(&items).unwrap()
        );
        // Nothing kept: the head is written again.
        body.keep(0);
        let bytes = body.write(|b| b.extend_from_slice(b"{\"m\":["), &items, b"]}");
        let want = serde_json::to_vec(&json!({ "m": items })).unwrap();
        assert_eq!(bytes, want.as_slice());
    }

    #[test]
    fn a_stale_keep_is_not_trusted_past_what_was_written() {
        let mut body = Body::default();
        let items = vec![json!(1), json!(2)];
        array(&mut body, &items[..1]);
        // keep() never raises the count: the second element is written.
        body.keep(5);
        assert_eq!(array(&mut body, &items), b"[1,2]");
    }
}
