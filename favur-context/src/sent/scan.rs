//! The few bytes where the neutraliser must look, found with `memchr` (vectorised): the
//! first byte of a character that may open a mark, and line breaks. Each search runs
//! once per occurrence found, so a scan of a text is linear.

use memchr::{memchr, memchr2, memchr3};

/// The next occurrence of some bytes, remembered until the scan passes it.
#[derive(Debug, Default)]
struct Cached {
    /// `None` before the first search; then the last result (`Some(None)`: none left).
    next: Option<Option<usize>>,
}

impl Cached {
    fn find(
        &mut self,
        bytes: &[u8],
        from: usize,
        search: impl Fn(&[u8]) -> Option<usize>,
    ) -> Option<usize> {
        if let Some(found) = self.next
            && found.is_none_or(|p| p >= from)
        {
            return found;
        }
        let found = bytes.get(from..).and_then(search).map(|k| from + k);
        self.next = Some(found);
        found
    }
}

/// Where a character that opens a mark starts in a text beyond ASCII: `<` or `[` (found
/// with `memchr`), or one of the characters whose fold opens with `<` or `[`
/// (`fold::OPENERS`, rare in text: found by their first byte in UTF-8 and checked, the
/// scan run again only once passed).
#[derive(Debug, Default)]
pub(super) struct Openers {
    /// The next of the characters beyond ASCII.
    wide: Cached,
}

/// Per byte: whether it is the first byte of one of `fold::OPENERS` in UTF-8.
const WIDE_FIRST_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < super::fold::OPENERS.len() {
        let c = super::fold::OPENERS[i] as u32;
        let lead = if c < 0x800 {
            0xc0 | (c >> 6)
        } else if c < 0x1_0000 {
            0xe0 | (c >> 12)
        } else {
            0xf0 | (c >> 18)
        };
        table[lead as usize] = true;
        i += 1;
    }
    table
};

/// The first of `fold::OPENERS` in `bytes` (a text from a character boundary on).
fn next_wide(bytes: &[u8]) -> Option<usize> {
    let mut i = 0;
    loop {
        i += bytes
            .get(i..)?
            .iter()
            .position(|&b| WIDE_FIRST_BYTES[usize::from(b)])?;
        // At most one character's bytes: decoding must not look further.
        let c = bytes
            .get(i..bytes.len().min(i + 4))
            .and_then(|r| r.utf8_chunks().next())
            .and_then(|chunk| chunk.valid().chars().next());
        if c.is_some_and(super::fold::opens_mark) {
            return Some(i);
        }
        i += 1;
    }
}

impl Openers {
    /// The next byte at or after `from` where a character opening a mark starts.
    pub(super) fn next(&mut self, bytes: &[u8], from: usize) -> Option<usize> {
        let ascii = bytes
            .get(from..)
            .and_then(|r| memchr2(b'<', b'[', r))
            .map(|k| from + k);
        let wide = self.wide.find(bytes, from, next_wide);
        [ascii, wide].into_iter().flatten().min()
    }
}

/// Where lines break: LF, CR, VT, FF, and NEL, U+2028, U+2029 (found by their first
/// byte, 0xC2 or 0xE2, and checked).
#[derive(Debug, Default)]
pub(super) struct Breaks {
    common: Cached,
    form_feed: Cached,
    wide: Cached,
}

impl Breaks {
    /// The next line break at or after byte `from`: where it is and its length.
    pub(super) fn next(&mut self, bytes: &[u8], from: usize) -> Option<(usize, usize)> {
        let a = self
            .common
            .find(bytes, from, |r| memchr3(b'\n', b'\r', 0x0b, r));
        let b = self.form_feed.find(bytes, from, |r| memchr(0x0c, r));
        let mut at = from;
        let wide = loop {
            let p = self.wide.find(bytes, at, |r| memchr2(0xc2, 0xe2, r));
            match p {
                None => break None,
                Some(p) => match wide_break(bytes, p) {
                    Some(len) => break Some((p, len)),
                    None => at = p + 1,
                },
            }
        };
        [a.map(|p| (p, 1)), b.map(|p| (p, 1)), wide]
            .into_iter()
            .flatten()
            .min()
    }
}

/// The length of the break beyond ASCII at `at` (NEL, U+2028, U+2029), if one is there.
fn wide_break(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at..at + 2)? {
        // NEL (U+0085); 0xc2 is always a lead byte.
        [0xc2, 0x85] => Some(2),
        [0xe2, 0x80] if matches!(bytes.get(at + 2), Some(0xa8 | 0xa9)) => Some(3),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breaks_are_every_break_in_order() {
        let text = "a\nb\r\nc\u{b}d\u{c}e\u{85}f\u{2028}g\u{2029}h\u{2026}\u{c5}i—’\n";
        let mut expected = Vec::new();
        for (k, c) in text.char_indices() {
            if super::super::fold::LINE_BREAKS.contains(&c) {
                expected.push((k, c.len_utf8()));
            }
        }
        let mut found = Vec::new();
        let mut breaks = Breaks::default();
        let mut from = 0;
        while let Some((at, len)) = breaks.next(text.as_bytes(), from) {
            found.push((at, len));
            from = at + len;
        }
        assert_eq!(found, expected);
    }
}
