//! Exact token counts for OpenAI encodings (feature `tiktoken`), with the vocabularies
//! embedded in the `tiktoken-rs` crate: nothing is downloaded at build or run time.
//! (Feature `bpe-openai`'s [`BpeCounter`](crate::tokens::BpeCounter) gives the same counts,
//! faster.)

use tiktoken_rs::CoreBPE;

use crate::tokens::counter::TokenCounter;
use crate::tokens::encoding::Encoding;

/// Exact token counts for an OpenAI [`Encoding`], as `tiktoken` gives them (special
/// tokens in the text are counted as ordinary text). Its [`id`](TokenCounter::id) is
/// `tiktoken/<encoding>`.
///
/// ```
/// use favur_context::tokens::{TiktokenCounter, TokenCounter};
/// use favur_context::{fuzzy, History};
/// let o200k = TiktokenCounter::o200k();
/// assert_eq!(o200k.count_text("hello world"), 2);
/// assert_eq!(o200k.id(), "tiktoken/o200k_base");
/// let mut h = History::with_counter(TiktokenCounter::for_model("gpt-4.1").unwrap());
/// let id = h.append(fuzzy!(user: "hello world"));
/// assert_eq!(h.recall(id).unwrap().tokens(), 2);
/// ```
#[derive(Clone, Copy)]
pub struct TiktokenCounter {
    encoding: Encoding,
    bpe: &'static CoreBPE,
    id: &'static str,
}

impl std::fmt::Debug for TiktokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TiktokenCounter")
            .field("encoding", &self.encoding)
            .finish()
    }
}

impl TiktokenCounter {
    /// The counter for `encoding`. The first call for an encoding parses its embedded
    /// vocabulary (a fraction of a second); later ones share it.
    pub fn new(encoding: Encoding) -> Self {
        let (bpe, id) = match encoding {
            Encoding::O200kBase => (tiktoken_rs::o200k_base_singleton(), "tiktoken/o200k_base"),
            Encoding::Cl100kBase => (tiktoken_rs::cl100k_base_singleton(), "tiktoken/cl100k_base"),
        };
        TiktokenCounter { encoding, bpe, id }
    }

    /// `o200k_base`.
    pub fn o200k() -> Self {
        TiktokenCounter::new(Encoding::O200kBase)
    }

    /// `cl100k_base`.
    pub fn cl100k() -> Self {
        TiktokenCounter::new(Encoding::Cl100kBase)
    }

    /// The counter for an OpenAI model's encoding (see [`Encoding::for_model`]).
    pub fn for_model(model: &str) -> Option<Self> {
        Encoding::for_model(model).map(TiktokenCounter::new)
    }

    /// The counter whose [`id`](TokenCounter::id) this is.
    pub(crate) fn from_id(id: &str) -> Option<Self> {
        Encoding::ALL
            .into_iter()
            .find(|e| id.strip_prefix("tiktoken/") == Some(e.name()))
            .map(TiktokenCounter::new)
    }

    /// The encoding.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

impl TokenCounter for TiktokenCounter {
    fn id(&self) -> &str {
        self.id
    }

    fn count_text(&self, text: &str) -> u32 {
        u32::try_from(self.bpe.encode_ordinary(text).len()).unwrap_or(u32::MAX)
    }
}
