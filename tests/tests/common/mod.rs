// Shared by the integration tests (included with `mod common;`).
#![allow(dead_code)]

use favur_context::{History, Message, TokenCounter};

/// A counter independent of the library's default heuristic, so snapshots show
/// deterministic, easily checked counts: words of text plus one per part.
pub struct Words;

impl TokenCounter for Words {
    fn count_text(&self, text: &str) -> u32 {
        text.split_whitespace().count() as u32
    }

    fn count_message(&self, message: &Message) -> u32 {
        self.count_text(&message.text()) + message.parts.len() as u32
    }
}

pub fn history() -> History {
    History::with_counter(Words)
}
