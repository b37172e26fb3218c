//! Exact token counts for OpenAI encodings (feature `tiktoken`), with the vocabularies
//! embedded in the `tiktoken-rs` crate: nothing is downloaded at build or run time.

use tiktoken_rs::CoreBPE;

use crate::history::account::TokenCounter;

/// An OpenAI encoding.
///
/// ```
/// use favur_context::Encoding;
/// assert_eq!(Encoding::for_model("gpt-4o-mini"), Some(Encoding::O200kBase));
/// assert_eq!(Encoding::for_model("gpt-4-0613"), Some(Encoding::Cl100kBase));
/// assert_eq!(Encoding::for_model("deepseek-chat"), None);
/// assert_eq!(Encoding::O200kBase.name(), "o200k_base");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// `o200k_base`: GPT-4o, GPT-4.1, GPT-5, o1, o3, o4 models.
    O200kBase,
    /// `cl100k_base`: GPT-4, GPT-3.5 Turbo, `text-embedding-3-*`, `text-embedding-ada-002`.
    Cl100kBase,
}

impl Encoding {
    /// The encoding's name, as OpenAI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    /// The encoding an OpenAI model uses, by its name (a dated or fine-tuned name such as
    /// `gpt-4o-2024-08-06` or `ft:gpt-4o-mini:org::id` too). `None` for a model this map
    /// does not know, including every non-OpenAI model: their tokenizers differ, and
    /// o200k is then only an approximation.
    pub fn for_model(model: &str) -> Option<Encoding> {
        let m = model.strip_prefix("ft:").unwrap_or(model);
        let m = m.strip_prefix("openai/").unwrap_or(m);
        const O200K: [&str; 9] = [
            "gpt-4o",
            "gpt-4.1",
            "gpt-4.5",
            "gpt-5",
            "chatgpt-4o",
            "o1",
            "o3",
            "o4",
            "gpt-oss",
        ];
        const CL100K: [&str; 5] = [
            "gpt-4",
            "gpt-3.5",
            "gpt-35-turbo",
            "text-embedding-3",
            "text-embedding-ada-002",
        ];
        let starts = |prefix: &str| {
            m.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', ':', '.']))
        };
        if O200K.iter().any(|p| starts(p)) {
            Some(Encoding::O200kBase)
        } else if CL100K.iter().any(|p| starts(p)) {
            Some(Encoding::Cl100kBase)
        } else {
            None
        }
    }
}

/// Exact token counts for an OpenAI [`Encoding`], as `tiktoken` gives them (special
/// tokens in the text are counted as ordinary text). Its [`id`](TokenCounter::id) is
/// `tiktoken/<encoding>`.
///
/// ```
/// use favur_context::{fuzzy, History, TiktokenCounter, TokenCounter};
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
        [Encoding::O200kBase, Encoding::Cl100kBase]
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
