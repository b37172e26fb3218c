//! The OpenAI encodings the exact counters know (features `tiktoken` and `bpe-openai`).

/// An OpenAI encoding.
///
/// ```
/// use favur_context::tokens::Encoding;
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
    /// Every encoding, in a fixed order.
    pub(crate) const ALL: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

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
