//! The content parts beyond text and tools: a model's reasoning ([`Reasoning`]), images and
//! documents ([`Media`]), and the provider they came from ([`Provider`]).
//!
//! Their payloads (signatures, encrypted reasoning, base64 data) are opaque: kept byte for
//! byte, sent back unchanged, never summarized.

use serde::{Deserialize, Serialize};

/// The provider a [`Reasoning`] part came from: reasoning is only sent back to the
/// format it came from (a signature or an encrypted payload means nothing elsewhere).
///
/// ```
/// use favur_context::message::Provider;
/// assert_eq!(serde_json::to_string(&Provider::OpenAi).unwrap(), "\"openai\"");
/// assert_eq!(Provider::Gemini.as_str(), "gemini");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI (the Responses API's `reasoning` items).
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic (`thinking` and `redacted_thinking` blocks).
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Google Gemini (`thought` parts and `thoughtSignature`s).
    #[serde(rename = "gemini")]
    Gemini,
}

named_variants! {
    /// The lowercase name (`"openai"`, `"anthropic"`, `"gemini"`).
    Provider { OpenAi => "openai", Anthropic => "anthropic", Gemini => "gemini" }
}

/// A model's reasoning (thinking), kept as the provider sent it so that it can be sent
/// back unchanged with the tool calls it led to.
///
/// What each provider's payload is held as:
///
/// | provider | `id` | `text` | `signature` | `encrypted` |
/// |---|---|---|---|---|
/// | OpenAI Responses `reasoning` item | the item id (`rs_...`) | one entry per `summary_text` part, in order | none | `encrypted_content` |
/// | Anthropic `thinking` block | none | one entry, the `thinking` text | `signature` | none |
/// | Anthropic `redacted_thinking` block | none | empty | none | `data` |
/// | Gemini | none | a thought-summary part's text (`thought: true`), else empty | `thoughtSignature` | none |
///
/// **Where it goes.** A reasoning part sits in the assistant message whose text and tool
/// calls it preceded, before them, in the provider's order. It belongs to that message's
/// tool calls: compaction keeps, summarizes or drops it with them and never splits them
/// (a reduced form that keeps the calls keeps the reasoning).
///
/// **Gemini convention.** Gemini attaches a `thoughtSignature` to the content part it
/// signs (a `functionCall` or a text part). That is held as a
/// `Reasoning { provider: Gemini, signature: Some(..), .. }` part placed **immediately
/// before** the part it signs, with `text` empty unless the signed part was itself a
/// thought summary (`thought: true`, whose text goes in `text`).
///
/// The summarizer never copies a signature or an encrypted payload into a summary.
///
/// ```
/// use favur_context::message::{Part, Provider, Reasoning};
/// use favur_context::{Message, Role, ToolCall};
/// let thinking = Reasoning::anthropic("the tests are in tests/", "sig-1");
/// let m = Message::new(Role::Assistant, vec![
///     Part::from(thinking),
///     Part::from(ToolCall::new("c1", "ls", "{}")),
/// ]);
/// assert_eq!(m.reasoning().next().unwrap().signature.as_deref(), Some("sig-1"));
/// let json = serde_json::to_value(&m.parts[0]).unwrap();
/// assert_eq!(json["type"], "reasoning");
/// assert_eq!(json["provider"], "anthropic");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reasoning {
    /// The provider it came from (and the only one it is sent to).
    pub provider: Provider,
    /// The provider's id for it (OpenAI: the `rs_...` reasoning item id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The visible reasoning text, in the provider's pieces (OpenAI: one per
    /// `summary_text` part; Anthropic, Gemini: at most one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub text: Vec<String>,
    /// A signature that proves the reasoning unchanged (Anthropic `signature`, Gemini
    /// `thoughtSignature`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The reasoning as an opaque encrypted payload (OpenAI `encrypted_content`,
    /// Anthropic `redacted_thinking` `data`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<String>,
}

impl Reasoning {
    /// Reasoning from `provider` with no id, text, signature or payload yet.
    pub fn new(provider: Provider) -> Self {
        Reasoning {
            provider,
            id: None,
            text: Vec::new(),
            signature: None,
            encrypted: None,
        }
    }

    /// An Anthropic `thinking` block: its text and signature.
    pub fn anthropic(thinking: impl Into<String>, signature: impl Into<String>) -> Self {
        Reasoning {
            text: vec![thinking.into()],
            signature: Some(signature.into()),
            ..Reasoning::new(Provider::Anthropic)
        }
    }

    /// An Anthropic `redacted_thinking` block: its opaque `data`.
    pub fn anthropic_redacted(data: impl Into<String>) -> Self {
        Reasoning {
            encrypted: Some(data.into()),
            ..Reasoning::new(Provider::Anthropic)
        }
    }

    /// An OpenAI Responses `reasoning` item: its id, summary texts and, if the request
    /// was not stored, its `encrypted_content`.
    pub fn openai(
        id: impl Into<String>,
        summary: impl IntoIterator<Item = impl Into<String>>,
        encrypted: Option<String>,
    ) -> Self {
        Reasoning {
            id: Some(id.into()),
            text: summary.into_iter().map(Into::into).collect(),
            encrypted,
            ..Reasoning::new(Provider::OpenAi)
        }
    }

    /// A Gemini `thoughtSignature` (placed immediately before the part it signs).
    pub fn gemini_signature(signature: impl Into<String>) -> Self {
        Reasoning {
            signature: Some(signature.into()),
            ..Reasoning::new(Provider::Gemini)
        }
    }

    /// The visible text, its pieces joined by newlines.
    ///
    /// ```
    /// let r = favur_context::message::Reasoning::openai("rs_1", ["a", "b"], None);
    /// assert_eq!(r.joined_text(), "a\nb");
    /// ```
    pub fn joined_text(&self) -> String {
        self.text.join("\n")
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        for t in &mut self.text {
            t.shrink_to_fit();
        }
        for s in [&mut self.id, &mut self.signature, &mut self.encrypted]
            .into_iter()
            .flatten()
        {
            s.shrink_to_fit();
        }
    }
}

/// Where the bytes of an image or a document are.
///
/// ```
/// use favur_context::message::MediaSource;
/// let s = MediaSource::Url { url: "https://example.com/a.png".into() };
/// assert_eq!(serde_json::to_value(&s).unwrap()["type"], "url");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum MediaSource {
    /// The bytes themselves, base64-encoded (standard alphabet, padded).
    Base64 {
        /// The base64 text.
        data: String,
    },
    /// A URL the provider fetches.
    Url {
        /// The URL.
        url: String,
    },
    /// A file uploaded to the provider beforehand, by its id.
    File {
        /// The provider's file id.
        file_id: String,
    },
}

/// An image or a document in a message (a [`Part::Image`](crate::message::Part::Image) or
/// [`Part::Document`](crate::message::Part::Document)).
///
/// In a tool message, a media part after a [`ToolResult`](crate::message::ToolResult) belongs to
/// that result (a tool that returned an image); formats that cannot carry it there send a
/// visible text note saying what was there. No renderer drops one silently.
///
/// **Counting.** A media part counts [`Media::estimated_tokens`]: an image a fixed
/// [`IMAGE_TOKENS`] (about what a provider charges for an image downscaled to its
/// maximum size), a base64 document a quarter of its decoded size (at least
/// [`MIN_DOCUMENT_TOKENS`]), a document by URL or file id a fixed [`DOCUMENT_TOKENS`].
///
/// ```
/// use favur_context::message::{Media, Part};
/// let png = Media::base64("image/png", "iVBORw0KGgo=");
/// assert_eq!(png.estimated_tokens(false), favur_context::message::IMAGE_TOKENS);
/// let json = serde_json::to_value(Part::Image(Box::new(png))).unwrap();
/// assert_eq!(json["type"], "image");
/// assert_eq!(json["source"]["type"], "base64");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Media {
    /// The IANA media type (`image/png`, `application/pdf`, ...).
    pub media_type: String,
    /// Where its bytes are.
    pub source: MediaSource,
    /// A file name or title, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Tokens an image is counted as (see [`Media`]).
pub const IMAGE_TOKENS: u32 = 1_600;
/// Tokens a document by URL or file id is counted as (see [`Media`]).
pub const DOCUMENT_TOKENS: u32 = 3_000;
/// The fewest tokens a base64 document is counted as (see [`Media`]).
pub const MIN_DOCUMENT_TOKENS: u32 = 256;

impl Media {
    /// Media of `media_type` with base64 `data`.
    pub fn base64(media_type: impl Into<String>, data: impl Into<String>) -> Self {
        Media::with_source(media_type, MediaSource::Base64 { data: data.into() })
    }

    /// Media of `media_type` at `url`.
    pub fn url(media_type: impl Into<String>, url: impl Into<String>) -> Self {
        Media::with_source(media_type, MediaSource::Url { url: url.into() })
    }

    /// Media of `media_type` uploaded as file `file_id`.
    pub fn file(media_type: impl Into<String>, file_id: impl Into<String>) -> Self {
        Media::with_source(
            media_type,
            MediaSource::File {
                file_id: file_id.into(),
            },
        )
    }

    fn with_source(media_type: impl Into<String>, source: MediaSource) -> Self {
        Media {
            media_type: media_type.into(),
            source,
            name: None,
        }
    }

    /// The same media with a file name or title.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The decoded size of base64 data (from its length; none for other sources).
    ///
    /// ```
    /// assert_eq!(favur_context::message::Media::base64("image/png", "AAAA").decoded_len(), Some(3));
    /// ```
    pub fn decoded_len(&self) -> Option<usize> {
        match &self.source {
            MediaSource::Base64 { data } => {
                let body = data.trim_end_matches('=').len();
                Some(body / 4 * 3 + (body % 4 * 3 / 4))
            }
            _ => None,
        }
    }

    /// The tokens it is counted as: an image (`document == false`) [`IMAGE_TOKENS`]; a
    /// document a quarter of its decoded size, at least [`MIN_DOCUMENT_TOKENS`], or
    /// [`DOCUMENT_TOKENS`] when its size is unknown (URL, file id).
    ///
    /// ```
    /// use favur_context::message::{DOCUMENT_TOKENS, MIN_DOCUMENT_TOKENS, Media};
    /// assert_eq!(Media::url("application/pdf", "https://x/a.pdf").estimated_tokens(true), DOCUMENT_TOKENS);
    /// assert_eq!(Media::base64("application/pdf", "AAAA").estimated_tokens(true), MIN_DOCUMENT_TOKENS);
    /// let big = Media::base64("application/pdf", "A".repeat(40_000));
    /// assert_eq!(big.estimated_tokens(true), 7_500);
    /// ```
    pub fn estimated_tokens(&self, document: bool) -> u32 {
        if !document {
            return IMAGE_TOKENS;
        }
        match self.decoded_len() {
            Some(n) => u32::try_from(n / 4)
                .unwrap_or(u32::MAX)
                .max(MIN_DOCUMENT_TOKENS),
            None => DOCUMENT_TOKENS,
        }
    }

    /// A one-line description: kind, media type, name and where it is (never its data),
    /// e.g. `[image image/png, 12 KB base64]`. What a format that cannot carry it in its
    /// place sends instead, and what a summary mentions.
    ///
    /// ```
    /// use favur_context::message::Media;
    /// let m = Media::url("image/png", "https://example.com/a.png");
    /// assert_eq!(m.describe("image"), "[image image/png at https://example.com/a.png]");
    /// let d = Media::file("application/pdf", "file_9").named("spec.pdf");
    /// assert_eq!(d.describe("document"), "[document application/pdf \"spec.pdf\", file file_9]");
    /// ```
    pub fn describe(&self, kind: &str) -> String {
        let mut s = format!("[{kind} {}", self.media_type);
        if let Some(name) = &self.name {
            s.push_str(&format!(" {name:?}"));
        }
        match &self.source {
            MediaSource::Base64 { .. } => {
                let kb = self.decoded_len().unwrap_or(0).div_ceil(1024);
                s.push_str(&format!(", {kb} KB base64"));
            }
            MediaSource::Url { url } => s.push_str(&format!(" at {url}")),
            MediaSource::File { file_id } => s.push_str(&format!(", file {file_id}")),
        }
        s.push(']');
        s
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        self.media_type.shrink_to_fit();
        match &mut self.source {
            MediaSource::Base64 { data: s }
            | MediaSource::Url { url: s }
            | MediaSource::File { file_id: s } => s.shrink_to_fit(),
        }
        if let Some(n) = &mut self.name {
            n.shrink_to_fit();
        }
    }
}
