//! Server-sent events: a byte stream split into the data of each event.

/// Splits a server-sent-events byte stream into the data of each event (the `data:`
/// lines of one event joined by newlines), whatever the chunk boundaries. Comments
/// (`: ping`) and other fields (`event:`, `id:`) are skipped; lines may end in `\n` or
/// `\r\n`.
///
/// ```
/// use favur_context::reply::SseDecoder;
/// let mut sse = SseDecoder::default();
/// assert!(sse.feed(b"event: ping\ndata: {\"a\"").is_empty());
/// assert_eq!(sse.feed(b":1}\n\ndata: [DONE]\n\n"), vec![r#"{"a":1}"#, "[DONE]"]);
/// ```
#[derive(Debug, Clone, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    data: Option<String>,
}

impl SseDecoder {
    /// Feeds a chunk; returns the data of every event it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        for &b in chunk {
            if b != b'\n' {
                self.line.push(b);
                continue;
            }
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, &mut out);
        }
        out
    }

    /// Ends the stream: the data of an event the stream did not close with a blank line.
    ///
    /// ```
    /// let mut sse = favur_context::reply::SseDecoder::default();
    /// sse.feed(b"data: last");
    /// assert_eq!(sse.finish().as_deref(), Some("last"));
    /// ```
    pub fn finish(&mut self) -> Option<String> {
        let mut out = Vec::new();
        let line = std::mem::take(&mut self.line);
        if !line.is_empty() {
            self.line_done(&line, &mut out);
        }
        out.pop().or_else(|| self.data.take())
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<String>) {
        if line.is_empty() {
            out.extend(self.data.take());
            return;
        }
        let Some(rest) = line.strip_prefix(b"data:") else {
            return; // a comment or another field
        };
        let rest = rest.strip_prefix(b" ").unwrap_or(rest);
        let text = String::from_utf8_lossy(rest);
        match &mut self.data {
            Some(d) => {
                d.push('\n');
                d.push_str(&text);
            }
            None => self.data = Some(text.into_owned()),
        }
    }
}
