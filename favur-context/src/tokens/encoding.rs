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

/// An exact counter: the struct (documented by the attributes given) over a `&'static
/// $tokenizer` of each encoding, named `$prefix` then the encoding's name, with its
/// `Debug` (the encoding only), constructors by encoding and by model, the counter whose
/// id this is, [`encoding`](Encoding), and the [`TokenCounter`](crate::tokens::TokenCounter)
/// impl that counts `text` with `tokenizer` as `$count` says.
macro_rules! encoding_counter {
    (
        $(#[$doc:meta])*
        $counter:ident(&'static $tokenizer:ty), $prefix:literal,
        $o200k:expr,
        $cl100k:expr,
        |$t:ident, $text:ident| $count:expr $(,)?
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub struct $counter {
            encoding: Encoding,
            tokenizer: &'static $tokenizer,
            id: &'static str,
        }

        impl std::fmt::Debug for $counter {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($counter))
                    .field("encoding", &self.encoding)
                    .finish()
            }
        }

        impl $counter {
            /// The counter for `encoding`. The first call for an encoding loads its embedded
            /// vocabulary (a fraction of a second); later ones share it.
            pub fn new(encoding: Encoding) -> Self {
                let (tokenizer, id) = match encoding {
                    Encoding::O200kBase => ($o200k, concat!($prefix, "o200k_base")),
                    Encoding::Cl100kBase => ($cl100k, concat!($prefix, "cl100k_base")),
                };
                $counter {
                    encoding,
                    tokenizer,
                    id,
                }
            }

            /// `o200k_base`.
            ///
            #[doc = concat!("```
use favur_context::tokens::{", stringify!($counter), ", TokenCounter};
assert_eq!(", stringify!($counter), "::o200k().count_text(\"fn main() {}\"), 4);
```")]
            pub fn o200k() -> Self {
                $counter::new(Encoding::O200kBase)
            }

            /// `cl100k_base`.
            ///
            #[doc = concat!("```
use favur_context::tokens::{", stringify!($counter), ", TokenCounter};
assert_eq!(", stringify!($counter), "::cl100k().id(), \"", $prefix, "cl100k_base\");
```")]
            pub fn cl100k() -> Self {
                $counter::new(Encoding::Cl100kBase)
            }

            /// The counter for an OpenAI model's encoding (see [`Encoding::for_model`]); `None`
            /// for a model whose tokenizer is not an OpenAI one.
            ///
            #[doc = concat!("```
use favur_context::tokens::{", stringify!($counter), ", Encoding};
assert_eq!(", stringify!($counter), "::for_model(\"gpt-4o\").unwrap().encoding(), Encoding::O200kBase);
assert!(", stringify!($counter), "::for_model(\"claude-sonnet-4\").is_none());
```")]
            pub fn for_model(model: &str) -> Option<Self> {
                Encoding::for_model(model).map($counter::new)
            }

            /// The counter whose [`id`](crate::tokens::TokenCounter::id) this is.
            pub(crate) fn from_id(id: &str) -> Option<Self> {
                Encoding::ALL
                    .into_iter()
                    .find(|e| id.strip_prefix($prefix) == Some(e.name()))
                    .map($counter::new)
            }

            /// The encoding.
            pub fn encoding(&self) -> Encoding {
                self.encoding
            }
        }

        impl crate::tokens::TokenCounter for $counter {
            fn id(&self) -> &str {
                self.id
            }

            fn count_text(&self, $text: &str) -> u32 {
                let $t = self.tokenizer;
                u32::try_from($count).unwrap_or(u32::MAX)
            }
        }
    };
}
pub(crate) use encoding_counter;
