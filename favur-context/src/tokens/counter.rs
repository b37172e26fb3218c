//! Token accounting: counting is done once per entry, when it is appended.

use crate::model::message::{Arguments, Message, Part};

/// Counts the tokens a piece of text or a message costs in a model request.
///
/// Counts are computed once per entry when it is appended and stored with it, so the
/// counter may be as slow as a real tokenizer without making usage reads slower.
/// Implement it to plug in a model's own tokenizer.
///
/// ```
/// use favur_context::tokens::TokenCounter;
/// struct Words;
/// impl TokenCounter for Words {
///     fn count_text(&self, text: &str) -> u32 { text.split_whitespace().count() as u32 }
/// }
/// assert_eq!(Words.count_text("three little words"), 3);
/// ```
pub trait TokenCounter: Send + Sync {
    /// Tokens in a piece of text.
    fn count_text(&self, text: &str) -> u32;

    /// A stable name for this counter and its settings, recorded with a history (in its
    /// serialized form and in a journal's header) so that reopening it with another
    /// counter is noticed. Two counters with the same id must count alike.
    ///
    /// The default is the type's name; override it with a name of your own that stays the
    /// same across versions and renames (and that includes any setting that changes the
    /// counts, such as an encoding).
    ///
    /// ```
    /// use favur_context::tokens::{HeuristicCounter, TokenCounter};
    /// assert_eq!(HeuristicCounter.id(), "heuristic/v1");
    /// struct Words;
    /// impl TokenCounter for Words {
    ///     fn count_text(&self, text: &str) -> u32 { text.split_whitespace().count() as u32 }
    /// }
    /// assert!(Words.id().ends_with("Words"));
    /// ```
    fn id(&self) -> &str {
        std::any::type_name::<Self>()
    }

    /// Tokens in a whole message (its content, not the per-message framing).
    ///
    /// The default sums the text of every part, tool names and arguments; a reasoning
    /// part counts its visible text (its signature and encrypted payload are not counted),
    /// an image or document its [`Media::estimated_tokens`](crate::message::Media::estimated_tokens).
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
                Part::Reasoning(r) => r
                    .text
                    .iter()
                    .fold(2u32, |n, t| n.saturating_add(self.count_text(t))),
                Part::Image(m) => m.estimated_tokens(false),
                Part::Document(m) => m.estimated_tokens(true),
            };
            total = total.saturating_add(n);
        }
        total
    }
}

/// The default counter: about one token per four bytes, and at least one token per
/// word-like run, with no dependencies and no tables.
///
/// Against OpenAI's o200k encoding it is close on code and prose but undercounts logs and
/// JSON (see `docs/tokens.md` for measured ratios); plug in a real tokenizer through
/// [`TokenCounter`] (or the `bpe-openai` feature's `BpeCounter`, the `tiktoken` feature's
/// `TiktokenCounter`) where exact figures matter.
///
/// ```
/// use favur_context::tokens::{HeuristicCounter, TokenCounter};
/// assert_eq!(HeuristicCounter.count_text(""), 0);
/// assert!(HeuristicCounter.count_text("hello world") >= 2);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct HeuristicCounter;

/// The id of the [`HeuristicCounter`].
pub(crate) const HEURISTIC_ID: &str = "heuristic/v1";

impl TokenCounter for HeuristicCounter {
    fn id(&self) -> &str {
        HEURISTIC_ID
    }

    fn count_text(&self, text: &str) -> u32 {
        let bytes = text.len();
        if bytes == 0 {
            return 0;
        }
        let by_bytes = bytes.div_ceil(4);
        u32::try_from(by_bytes.max(words(text.as_bytes()))).unwrap_or(u32::MAX)
    }
}

/// The whitespace-separated runs of `b` ([`u8::is_ascii_whitespace`] separates): each
/// costs at least a token. A run starts at a byte that is not whitespace where the byte
/// before it is (or at the start): counted pair by pair without a branch, in blocks
/// whose counts fit a byte, so the compiler reads many bytes per instruction.
fn words(b: &[u8]) -> usize {
    let Some(&first) = b.first() else {
        return 0;
    };
    // Tab, line feed, form feed, carriage return, space (not the vertical tab).
    let space = |c: u8| (c == b' ') | ((c.wrapping_sub(b'\t') < 5) & (c != 0x0b));
    let mut starts = usize::from(!space(first));
    let (before, at) = (&b[..b.len() - 1], &b[1..]);
    for (x, y) in before.chunks(128).zip(at.chunks(128)) {
        let block: u8 = x
            .iter()
            .zip(y)
            .map(|(&x, &y)| u8::from(space(x) & !space(y)))
            .fold(0u8, u8::wrapping_add);
        starts += usize::from(block);
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count as it was written first: one byte at a time, a flag for "in a word".
    fn words_by_state(text: &str) -> usize {
        let mut words = 0usize;
        let mut in_word = false;
        for &b in text.as_bytes() {
            let space = b.is_ascii_whitespace();
            if !space && !in_word {
                words += 1;
            }
            in_word = !space;
        }
        words
    }

    #[test]
    fn runs_are_counted_as_the_byte_by_byte_count_does() {
        let alphabet = b"a \t\n\r\x0b\x0cZ\xc3";
        let mut rng = fastrand::Rng::with_seed(0x9e37_79b9_7f4a_7c15);
        let mut texts: Vec<String> = ["", " ", "a", " a", "a ", "a  b", "\u{a0}x y"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for _ in 0..5_000 {
            let mut s = Vec::new();
            for _ in 0..rng.usize(0..70) {
                s.push(alphabet[rng.usize(0..alphabet.len())]);
            }
            texts.push(String::from_utf8_lossy(&s).into_owned());
        }
        for t in &texts {
            assert_eq!(words(t.as_bytes()), words_by_state(t), "{t:?}");
            let expected = t.len().div_ceil(4).max(words_by_state(t));
            assert_eq!(HeuristicCounter.count_text(t) as usize, expected, "{t:?}");
        }
    }
}
