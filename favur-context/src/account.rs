//! Token accounting: counting is done once per entry, when it is appended.

use crate::message::{Arguments, Message, Part};

/// Counts the tokens a piece of text or a message costs in a model request.
///
/// Counts are computed once per entry when it is appended and stored with it, so the
/// counter may be as slow as a real tokenizer without making usage reads slower.
/// Implement it to plug in a model's own tokenizer.
///
/// ```
/// use favur_context::TokenCounter;
/// struct Words;
/// impl TokenCounter for Words {
///     fn count_text(&self, text: &str) -> u32 { text.split_whitespace().count() as u32 }
/// }
/// assert_eq!(Words.count_text("three little words"), 3);
/// ```
pub trait TokenCounter: Send + Sync {
    /// Tokens in a piece of text.
    fn count_text(&self, text: &str) -> u32;

    /// Tokens in a whole message (its content, not the per-message framing).
    ///
    /// The default sums the text of every part, tool names and arguments.
    fn count_message(&self, message: &Message) -> u32 {
        let mut total = 0u32;
        for part in &message.parts {
            let n = match part {
                Part::Text(t) => self.count_text(t),
                Part::ToolCall(call) => {
                    let args = match &call.arguments {
                        Arguments::Json(v) => self.count_text(&v.to_string()),
                        Arguments::Invalid(raw) => self.count_text(raw),
                    };
                    self.count_text(&call.name)
                        .saturating_add(args)
                        .saturating_add(4)
                }
                Part::ToolResult(r) => self.count_text(&r.content).saturating_add(2),
            };
            total = total.saturating_add(n);
        }
        total
    }
}

/// The default counter: about one token per four bytes, and at least one token per
/// word-like run, with no dependencies and no tables.
///
/// It overestimates slightly for English prose and is close for code and logs; plug in a
/// real tokenizer through [`TokenCounter`] where exact figures matter.
///
/// ```
/// use favur_context::{HeuristicCounter, TokenCounter};
/// assert_eq!(HeuristicCounter.count_text(""), 0);
/// assert!(HeuristicCounter.count_text("hello world") >= 2);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct HeuristicCounter;

impl TokenCounter for HeuristicCounter {
    fn count_text(&self, text: &str) -> u32 {
        let bytes = text.len();
        if bytes == 0 {
            return 0;
        }
        // Whitespace-separated runs: each costs at least a token.
        let mut words = 0usize;
        let mut in_word = false;
        for &b in text.as_bytes() {
            let space = b.is_ascii_whitespace();
            if !space && !in_word {
                words += 1;
            }
            in_word = !space;
        }
        let by_bytes = bytes.div_ceil(4);
        u32::try_from(by_bytes.max(words)).unwrap_or(u32::MAX)
    }
}
