//! Token counting: what a text or a message costs in a model request (the
//! [`TokenCounter`] trait, the default heuristic and the exact
//! OpenAI counters of features `tiktoken` and `bpe-openai`). A history counts each entry
//! once, when it is appended.

#[cfg(feature = "bpe-openai")]
pub(crate) mod bpe;
pub(crate) mod counter;
#[cfg(any(feature = "tiktoken", feature = "bpe-openai"))]
pub(crate) mod encoding;
#[cfg(feature = "tiktoken")]
pub(crate) mod tiktoken;

#[cfg(feature = "bpe-openai")]
pub use bpe::BpeCounter;
pub use counter::{HeuristicCounter, TokenCounter};
#[cfg(any(feature = "tiktoken", feature = "bpe-openai"))]
pub use encoding::Encoding;
#[cfg(feature = "tiktoken")]
pub use tiktoken::TiktokenCounter;

use counter::HEURISTIC_ID;

/// The library's own counter with this id, if there is one: what a history recorded with
/// it is reopened with when no counter is named.
pub(crate) fn builtin_counter(id: &str) -> Option<std::sync::Arc<dyn TokenCounter>> {
    if id == HEURISTIC_ID {
        return Some(std::sync::Arc::new(HeuristicCounter));
    }
    #[cfg(feature = "tiktoken")]
    if let Some(c) = tiktoken::TiktokenCounter::from_id(id) {
        return Some(std::sync::Arc::new(c));
    }
    #[cfg(feature = "bpe-openai")]
    if let Some(c) = bpe::BpeCounter::from_id(id) {
        return Some(std::sync::Arc::new(c));
    }
    None
}
