//! Exact token counts for OpenAI encodings (feature `bpe-openai`), from the `bpe-openai`
//! crate: the counts `tiktoken` gives, counted without building the token vector, with
//! the vocabularies embedded in the crate (nothing is downloaded at build or run time).

use crate::tokens::counter::TokenCounter;
use crate::tokens::encoding::Encoding;

/// Exact token counts for an OpenAI [`Encoding`] from the `bpe-openai` crate: the same
/// counts as tiktoken's (special tokens in the text counted as ordinary text), counted
/// with the crate's count-only entry point, several times faster than
/// [`TiktokenCounter`](crate::tokens::TiktokenCounter) (see `docs/tokens.md`). Its
/// [`id`](TokenCounter::id) is `bpe-openai/<encoding>`.
///
/// ```
/// use favur_context::tokens::{BpeCounter, TokenCounter};
/// use favur_context::{fuzzy, History};
/// let o200k = BpeCounter::o200k();
/// assert_eq!(o200k.count_text("hello world"), 2);
/// assert_eq!(o200k.id(), "bpe-openai/o200k_base");
/// let mut h = History::with_counter(BpeCounter::for_model("gpt-4.1").unwrap());
/// let id = h.append(fuzzy!(user: "hello world"));
/// assert_eq!(h.recall(id).unwrap().tokens(), 2);
/// ```
#[derive(Clone, Copy)]
pub struct BpeCounter {
    encoding: Encoding,
    tokenizer: &'static bpe_openai::Tokenizer,
    id: &'static str,
}

impl std::fmt::Debug for BpeCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BpeCounter")
            .field("encoding", &self.encoding)
            .finish()
    }
}

impl BpeCounter {
    /// The counter for `encoding`. The first call for an encoding reads its embedded
    /// vocabulary (a fraction of a second); later ones share it.
    pub fn new(encoding: Encoding) -> Self {
        let (tokenizer, id) = match encoding {
            Encoding::O200kBase => (bpe_openai::o200k_base(), "bpe-openai/o200k_base"),
            Encoding::Cl100kBase => (bpe_openai::cl100k_base(), "bpe-openai/cl100k_base"),
        };
        BpeCounter {
            encoding,
            tokenizer,
            id,
        }
    }

    /// `o200k_base`.
    ///
    /// ```
    /// use favur_context::tokens::{BpeCounter, TokenCounter};
    /// assert_eq!(BpeCounter::o200k().count_text("fn main() {}"), 4);
    /// ```
    pub fn o200k() -> Self {
        BpeCounter::new(Encoding::O200kBase)
    }

    /// `cl100k_base`.
    ///
    /// ```
    /// use favur_context::tokens::{BpeCounter, TokenCounter};
    /// assert_eq!(BpeCounter::cl100k().id(), "bpe-openai/cl100k_base");
    /// ```
    pub fn cl100k() -> Self {
        BpeCounter::new(Encoding::Cl100kBase)
    }

    /// The counter for an OpenAI model's encoding (see [`Encoding::for_model`]); `None`
    /// for a model whose tokenizer is not an OpenAI one.
    ///
    /// ```
    /// use favur_context::tokens::{BpeCounter, Encoding};
    /// assert_eq!(BpeCounter::for_model("gpt-4o").unwrap().encoding(), Encoding::O200kBase);
    /// assert!(BpeCounter::for_model("claude-sonnet-4").is_none());
    /// ```
    pub fn for_model(model: &str) -> Option<Self> {
        Encoding::for_model(model).map(BpeCounter::new)
    }

    /// The counter whose [`id`](TokenCounter::id) this is.
    pub(crate) fn from_id(id: &str) -> Option<Self> {
        Encoding::ALL
            .into_iter()
            .find(|e| id.strip_prefix("bpe-openai/") == Some(e.name()))
            .map(BpeCounter::new)
    }

    /// The encoding.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

impl TokenCounter for BpeCounter {
    fn id(&self) -> &str {
        self.id
    }

    fn count_text(&self, text: &str) -> u32 {
        u32::try_from(self.tokenizer.count(text)).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_counted_with_it_reopens_with_it() {
        let mut h = crate::History::with_counter(BpeCounter::cl100k());
        h.append(crate::fuzzy!(user: "hello world, again"));
        let back = crate::History::from_json(&h.to_json()).unwrap();
        assert_eq!(back.counter().id(), "bpe-openai/cl100k_base");
        assert_eq!(back.entries(), h.entries());
        assert!(BpeCounter::from_id("bpe-openai/p50k_base").is_none());
        assert!(BpeCounter::from_id("tiktoken/o200k_base").is_none());
    }
}
