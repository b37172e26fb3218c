//! Classified import of existing transcripts: OpenAI chat messages, OpenAI Responses
//! items, Anthropic messages, Gemini `contents` and mini-swe-agent trajectories.
//!
//! Import is in two steps, and the second needs a [`Classifier`]: there is no default
//! class and no way to import without one.
//!
//! 1. [`parse`] reads a transcript into a [`Transcript`] of plain (unclassified) messages,
//!    checking its structure: malformed input is an [`ImportError`] naming the message
//!    index and what is wrong.
//! 2. [`Transcript::classify`] asks the classifier for the class of every message and
//!    returns [`ImportedMessage`]s (ready to append, e.g. step by step in a replay), or
//!    [`Transcript::import_into`] appends them all to a history. All or nothing: the
//!    history is only touched once every message is classified.
//!
//! [`classify_str`] does both steps reading one message at a time (a large transcript
//! is never held whole as a value nor as a [`Transcript`]), and [`import`] records what
//! it gives: the same messages and errors as the two steps, in a fraction of the memory.
//!
//! ```
//! use favur_context::{History, Retention};
//! use favur_context::import::{self, Format, IncomingMessage};
//!
//! let json = r#"[
//!   {"role": "system", "content": "You are a coding agent."},
//!   {"role": "user", "content": "Fix the test."},
//!   {"role": "assistant", "content": null, "tool_calls": [
//!     {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]},
//!   {"role": "tool", "tool_call_id": "c1", "content": "src\ntests"}
//! ]"#;
//! let classifier = |m: &IncomingMessage<'_>| match m.command() {
//!     Some(c) if c.starts_with("ls") => Retention::Forgettable,
//!     _ => Retention::Strict,
//! };
//! let mut history = History::new();
//! let report = import::import(&mut history, Format::OpenAi, json, &classifier).unwrap();
//! assert_eq!(history.pinned().len(), 1);
//! assert_eq!(history.view().len(), 3);
//! assert_eq!(history.recall(report.ids[3].1).unwrap().retention(), Retention::Forgettable);
//! ```

pub mod rules;

mod incoming;
pub use incoming::IncomingMessage;

mod anthropic;
mod classifying;
mod each;
mod gemini;
pub mod mcp;
pub(crate) mod mini_swe;
use each::Sink;
mod openai;
mod parts;
pub(crate) use parts::text_content;
mod responses;
pub mod shell;
mod stream;
pub use stream::{Imported, classify_str};
mod error;
pub use error::ImportError;
pub(crate) use error::bad;
mod message_fields;
pub(crate) use message_fields::{
    Calls, arguments, engine_fields, message_list, nonempty_str, object, role_of,
};

use std::borrow::Cow;
use std::fmt;

use serde_json::Value;

use crate::history::History;
use crate::model::classify::Classified;
use crate::model::entry::EntryId;
use crate::model::message::{Message, Role, ToolCall};
use crate::model::retention::Retention;
use classifying::Classifying;

/// A transcript format [`parse`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// OpenAI Chat Completions messages: an array, or an object with `messages`.
    OpenAi,
    /// Anthropic Messages: an object with `messages` and optional `system`, or an array.
    Anthropic,
    /// A mini-swe-agent trajectory (an object with `messages`, or an array), in either of
    /// its formats: plain chat (a fenced bash block in the assistant text, the
    /// observation in the next user message) or tool calling (`tool_calls` answered by
    /// `tool` messages).
    MiniSweAgent,
    /// Gemini `generateContent` `contents` (`user` and `model` turns of parts), an
    /// object with `contents` and optional `systemInstruction`, or the array alone.
    Gemini,
    /// OpenAI Responses items (`message`, `reasoning`, `function_call`,
    /// `function_call_output`): a list, or an object with `input`/`output` lists.
    Responses,
}

impl Format {
    /// The short name used in call sites (`import:<name>`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Format::OpenAi => "openai",
            Format::Anthropic => "anthropic",
            Format::MiniSweAgent => "mini-swe-agent",
            Format::Gemini => "gemini",
            Format::Responses => "responses",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Options for [`parse_with`].
///
/// ```
/// use favur_context::import::{parse_with, Format, ParseOptions};
/// let json = r#"[{"role": "assistant", "content": null, "tool_calls": [
///   {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{oops"}}]}]"#;
/// assert!(parse_with(Format::OpenAi, json, ParseOptions::default()).is_err());
/// let t = parse_with(Format::OpenAi, json, ParseOptions { keep_invalid_arguments: true }).unwrap();
/// assert_eq!(t.messages()[0].message.tool_calls().next().unwrap().arguments.to_json_string(), "{oops");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseOptions {
    /// Keep tool-call arguments that are not valid JSON verbatim (as
    /// [`Arguments::Invalid`](crate::message::Arguments::Invalid)) instead of rejecting the transcript. Models do produce
    /// such calls; the default rejects them as malformed input.
    pub keep_invalid_arguments: bool,
}

/// One message of a parsed transcript, not yet classified.
///
/// ```
/// let t = favur_context::import::parse(favur_context::import::Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
/// assert_eq!(t.messages()[0].index, 0);
/// assert!(!t.messages()[0].pin);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TranscriptMessage {
    /// Index of the source message in the transcript's list (for the `system` text of an
    /// Anthropic request, which is outside the list: 0, with `block` its position when
    /// `system` is an array of blocks).
    pub index: usize,
    /// For a source message split into several (an Anthropic user turn with several
    /// `tool_result` blocks), the index of the first block this one holds.
    pub block: Option<usize>,
    /// The message.
    pub message: Message,
    /// Whether it is pinned rather than appended (leading system messages).
    pub pin: bool,
    /// For a result or observation: the call it answers (for a mini-swe-agent plain-chat
    /// observation, the action parsed from the assistant text, as a `bash` call with
    /// `{"command": ...}` and an empty id). For an assistant message in the plain-chat
    /// format: its parsed action.
    pub action: Option<ToolCall>,
    /// Whether this message is a tool result or an observation from the environment.
    pub is_result: bool,
    /// The prompt size the provider reported for this step, where the transcript has it
    /// (mini-swe-agent's `prompt_tokens`).
    pub prompt_tokens: Option<u64>,
}

/// A transcript message that is not pinned, answers nothing and has no reported size.
pub(crate) fn msg(index: usize, block: Option<usize>, message: Message) -> TranscriptMessage {
    TranscriptMessage {
        index,
        block,
        message,
        pin: false,
        action: None,
        is_result: false,
        prompt_tokens: None,
    }
}

/// A parsed transcript: its messages in order and, for mini-swe-agent runs, the exit
/// record (not part of any request, so not a message).
///
/// ```
/// use favur_context::import::{parse, Format};
/// let t = parse(Format::MiniSweAgent, r#"{"messages": [
///   {"role": "system", "content": "sys"}, {"role": "user", "content": "task"},
///   {"role": "exit", "content": "patch"}]}"#).unwrap();
/// assert_eq!(t.messages().len(), 2);
/// assert_eq!(t.exit(), Some("patch"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    format: Format,
    messages: Vec<TranscriptMessage>,
    exit: Option<String>,
}

/// A classified message of a transcript, ready to append (or pin).
///
/// ```
/// use favur_context::{History, Retention};
/// use favur_context::import::{parse, Format, IncomingMessage};
/// let t = parse(Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
/// let classified = t.classify(&|_: &IncomingMessage<'_>| Retention::Strict).unwrap();
/// let mut h = History::new();
/// for m in classified {
///     if m.pin { h.pin(m.classified); } else { h.append(m.classified); }
/// }
/// assert_eq!(h.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedMessage {
    /// Index of the source message.
    pub index: usize,
    /// Whether to pin it rather than append it.
    pub pin: bool,
    /// The message with its class and call site (`import:<format>:<index>:<column>`, or
    /// `import:<format>/<rule>` when the classifier names a rule).
    pub classified: Classified,
    /// The prompt size the provider reported for this step, if the transcript has it.
    pub prompt_tokens: Option<u64>,
}

impl From<ImportedMessage> for crate::history::NewEntry {
    /// The entry a store records for an imported message: pinned if its rules pin it,
    /// appended otherwise, as [`import`] records it.
    ///
    /// ```
    /// use favur_context::import::{parse, Format, IncomingMessage};
    /// use favur_context::store::NewEntry;
    /// use favur_context::{History, Retention, Store};
    /// let t = parse(Format::OpenAi, r#"[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]"#).unwrap();
    /// let pin_system = |m: &IncomingMessage<'_>| Retention::Strict;
    /// let mut messages = t.classify(&pin_system).unwrap();
    /// messages[0].pin = true;
    /// let mut h = History::new();
    /// h.record(messages.into_iter().map(NewEntry::from).collect()).unwrap();
    /// assert_eq!((h.pinned().len(), h.view().len()), (1, 1));
    /// ```
    fn from(m: ImportedMessage) -> Self {
        if m.pin {
            Self::pinned(m.classified)
        } else {
            Self::appended(m.classified)
        }
    }
}

/// What an import recorded.
///
/// ```
/// use favur_context::{History, Retention};
/// use favur_context::import::{import, Format, IncomingMessage};
/// let mut h = History::new();
/// let r = import(&mut h, Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#, &|_: &IncomingMessage<'_>| Retention::Fuzzy).unwrap();
/// assert_eq!(r.ids.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportReport {
    /// `(source message index, entry id)` for each message recorded, in order.
    pub ids: Vec<(usize, EntryId)>,
    /// The mini-swe-agent exit record, if any.
    pub exit: Option<String>,
}

/// A classifier's answer: the class, optionally the name of the rule that chose it
/// (recorded in the entry's call site so reports can group by rule), and whether the
/// message is pinned (shown verbatim, in place, in every request) rather than appended.
/// The one decision type of imports and rules files ([`Rules`](crate::import::rules::Rules)
/// gives it too).
///
/// ```
/// use favur_context::Retention;
/// use favur_context::import::Decision;
/// let d = Decision::from(Retention::Fuzzy).with_rule("file-view");
/// assert_eq!(d.rule.as_deref(), Some("file-view"));
/// assert!(!d.pin);
/// assert!(Decision::from(Retention::Strict).pinned().pin);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Decision {
    /// The class.
    pub class: Retention,
    /// The rule that chose it.
    pub rule: Option<Cow<'static, str>>,
    /// Whether the message is pinned rather than appended.
    pub pin: bool,
    /// Its [supersession key](crate::Classified::with_key), if the classifier gives one
    /// (a rule's `key`: the file a view or an edit is of, the command a test run ran).
    pub key: Option<String>,
    /// The [part](crate::Classified::with_key_part) of what the key names that the
    /// message shows (`None`: the whole of it).
    pub key_part: Option<crate::message::KeyPart>,
}

impl Decision {
    /// Gives the message a [supersession key](crate::Classified::with_key).
    pub fn with_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Names the rule that chose the class.
    pub fn with_rule(mut self, rule: impl Into<Cow<'static, str>>) -> Self {
        self.rule = Some(rule.into());
        self
    }

    /// Pins the message: it is recorded with [`History::pin`](crate::History::pin).
    pub fn pinned(mut self) -> Self {
        self.pin = true;
        self
    }
}

impl From<Retention> for Decision {
    fn from(class: Retention) -> Self {
        Decision {
            class,
            rule: None,
            pin: false,
            key: None,
            key_part: None,
        }
    }
}

/// A classifier declined to classify a message (e.g. no rule matched). Import collects
/// every such message into [`ImportError::Unclassified`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unclassified(pub String);

/// Chooses the class of each incoming message. Required by every import.
///
/// Closures `Fn(&IncomingMessage) -> Retention` are classifiers; implement the trait for
/// classifiers that name their rules or can decline a message.
///
/// ```
/// use favur_context::Retention;
/// use favur_context::import::{Classifier, Decision, IncomingMessage, Unclassified};
///
/// struct OnlyUsers;
/// impl Classifier for OnlyUsers {
///     fn classify(&self, m: &IncomingMessage<'_>) -> Result<Decision, Unclassified> {
///         match m.role() {
///             favur_context::Role::User => Ok(Decision::from(Retention::Strict).with_rule("user")),
///             other => Err(Unclassified(format!("no rule for {other}"))),
///         }
///     }
/// }
/// let t = favur_context::import::parse(favur_context::import::Format::OpenAi,
///     r#"[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]"#).unwrap();
/// let err = t.classify(&OnlyUsers).unwrap_err();
/// assert_eq!(err.to_string(), "1 message(s) not classified: 1 (no rule for assistant)");
/// ```
pub trait Classifier {
    /// The class of `message`, or why it has none.
    fn classify(&self, message: &IncomingMessage<'_>) -> Result<Decision, Unclassified>;
}

impl<F> Classifier for F
where
    F: Fn(&IncomingMessage<'_>) -> Retention,
{
    fn classify(&self, message: &IncomingMessage<'_>) -> Result<Decision, Unclassified> {
        Ok(Decision::from(self(message)))
    }
}

impl Transcript {
    pub(crate) fn new(
        format: Format,
        messages: Vec<TranscriptMessage>,
        exit: Option<String>,
    ) -> Self {
        Transcript {
            format,
            messages,
            exit,
        }
    }

    /// The format it was read from.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The messages, in order.
    ///
    /// ```
    /// use favur_context::import::{parse, Format};
    /// assert!(parse(Format::OpenAi, "[]").unwrap().messages().is_empty());
    /// ```
    pub fn messages(&self) -> &[TranscriptMessage] {
        &self.messages
    }

    /// The mini-swe-agent exit record (the submission), if the run has one.
    ///
    /// ```
    /// use favur_context::import::{parse, Format};
    /// assert_eq!(parse(Format::OpenAi, "[]").unwrap().exit(), None);
    /// ```
    pub fn exit(&self) -> Option<&str> {
        self.exit.as_deref()
    }

    /// What a classifier sees of the `i`-th message of [`messages`](Self::messages).
    ///
    /// ```
    /// use favur_context::import::{parse, Format};
    /// let t = parse(Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    /// assert!(t.incoming(0).is_some() && t.incoming(1).is_none());
    /// ```
    pub fn incoming(&self, i: usize) -> Option<IncomingMessage<'_>> {
        let role = |m: &TranscriptMessage| {
            if m.is_result {
                Role::Tool
            } else {
                m.message.role
            }
        };
        self.messages.get(i).map(|inner| IncomingMessage {
            format: self.format,
            inner,
            first: !self.messages[..i].iter().any(|m| role(m) == role(inner)),
        })
    }

    /// Classifies every message. Every message the classifier declines is listed in the
    /// error; nothing is returned unless all are classified.
    ///
    /// ```
    /// use favur_context::Retention;
    /// use favur_context::import::{parse, Format, IncomingMessage};
    /// let t = parse(Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    /// let out = t.classify(&|_: &IncomingMessage<'_>| Retention::Strict).unwrap();
    /// assert_eq!(out[0].classified.retention(), Retention::Strict);
    /// assert_eq!(out[0].classified.site().to_string(), "import:openai:0:1");
    /// ```
    pub fn classify<C: Classifier + ?Sized>(
        &self,
        classifier: &C,
    ) -> Result<Vec<ImportedMessage>, ImportError> {
        let mut classifying = Classifying::new(self.format, classifier, self.messages.len());
        for inner in &self.messages {
            classifying.take(Cow::Borrowed(inner));
        }
        classifying.finish()
    }

    /// Classifies every message and records them in `history` (pinning the leading
    /// system messages). All or nothing: on error the history is unchanged.
    ///
    /// ```
    /// use favur_context::{History, Retention};
    /// use favur_context::import::{parse, Format, IncomingMessage};
    /// let t = parse(Format::OpenAi, r#"[{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]"#).unwrap();
    /// let mut h = History::new();
    /// t.import_into(&mut h, &|_: &IncomingMessage<'_>| Retention::Strict).unwrap();
    /// assert_eq!((h.pinned().len(), h.view().len()), (1, 1));
    /// ```
    pub fn import_into<C: Classifier + ?Sized>(
        &self,
        history: &mut History,
        classifier: &C,
    ) -> Result<ImportReport, ImportError> {
        let classified = self.classify(classifier)?;
        Ok(classifying::record(history, classified, self.exit.clone()))
    }
}

/// Reads a transcript of `format` from JSON text, with default [`ParseOptions`].
///
/// ```
/// use favur_context::import::{parse, Format, ImportError};
/// assert!(matches!(parse(Format::OpenAi, "{not json"), Err(ImportError::Json(_))));
/// ```
pub fn parse(format: Format, json: &str) -> Result<Transcript, ImportError> {
    parse_with(format, json, ParseOptions::default())
}

/// Reads a transcript of `format` from JSON text.
///
/// ```
/// use favur_context::import::{parse_with, Format, ParseOptions};
/// let t = parse_with(Format::Anthropic, r#"{"system": "s", "messages": [{"role": "user", "content": "hi"}]}"#, ParseOptions::default()).unwrap();
/// assert_eq!(t.messages().len(), 2);
/// ```
pub fn parse_with(
    format: Format,
    json: &str,
    options: ParseOptions,
) -> Result<Transcript, ImportError> {
    parse_value(format, &read_json(json)?, options)
}

/// Reads JSON text as a [`Value`], refusing an object that holds a key twice (which
/// `serde_json` would read silently, keeping the last): the checked input of
/// [`parse_value`], for a caller that needs the document's other fields too (a proxy
/// keeps a request's `model` and `tools` beside the transcript it imports).
///
/// ```
/// use favur_context::import::{read_json, ImportError};
/// assert_eq!(read_json(r#"{"a": 1}"#).unwrap()["a"], 1);
/// let err = read_json(r#"{"role": "user", "role": "system"}"#).unwrap_err();
/// assert!(matches!(err, ImportError::DuplicateKey { ref key, line: 1, .. } if key == "role"));
/// assert!(matches!(read_json("{"), Err(ImportError::Json(_))));
/// ```
///
/// # Errors
///
/// [`ImportError::DuplicateKey`] for a repeated key, [`ImportError::Json`] for text that
/// is not JSON.
pub fn read_json(json: &str) -> Result<Value, ImportError> {
    crate::json_keys::check(json.as_bytes()).map_err(|d| ImportError::DuplicateKey {
        key: d.key,
        line: d.line,
        column: d.column,
    })?;
    serde_json::from_str(json).map_err(|e| ImportError::Json(e.to_string()))
}

/// Reads a transcript of `format` from a JSON value. A [`Value`] cannot hold a key twice
/// (parsing it kept the last one): read text with [`parse`] or [`parse_with`] to have
/// repeated keys refused ([`ImportError::DuplicateKey`]).
///
/// ```
/// use favur_context::import::{parse_value, Format, ParseOptions};
/// let v = serde_json::json!([{"role": "user", "content": "hi"}]);
/// assert_eq!(parse_value(Format::OpenAi, &v, ParseOptions::default()).unwrap().messages().len(), 1);
/// ```
pub fn parse_value(
    format: Format,
    value: &Value,
    options: ParseOptions,
) -> Result<Transcript, ImportError> {
    if format == Format::Responses {
        // Its items may stand in two lists (`input`, `output`): read whole.
        return responses::parse(value, options);
    }
    let list = message_list(value, format)?;
    let mut messages = Vec::with_capacity(list.len());
    let system = each::system_key(format).and_then(|key| value.get(key));
    let exit = each::read_each(format, system, list.iter().map(Ok), options, &mut |m| {
        messages.push(m);
        Ok(())
    })?;
    Ok(Transcript::new(format, messages, exit))
}

/// Parses `json` as `format`, classifies every message with `classifier` and records them
/// in `history`. All or nothing: on error the history is unchanged.
///
/// Streams: the messages are read and classified one at a time ([`classify_str`]), so
/// the document is never held as a [`Value`] or a [`Transcript`]; the history is only
/// touched once every message is read and classified. The same entries and errors as
/// [`parse`] then [`Transcript::import_into`].
///
/// ```
/// use favur_context::{History, Retention};
/// use favur_context::import::{import, Format, IncomingMessage};
/// let mut h = History::new();
/// let err = import(&mut h, Format::OpenAi, r#"[{"role": "user", "content": "a"}, {"role": "tool", "tool_call_id": "x", "content": "b"}]"#,
///     &|_: &IncomingMessage<'_>| Retention::Strict).unwrap_err();
/// assert_eq!(err.to_string(), "message 1: tool result for unknown call `x`");
/// assert!(h.is_empty());
/// ```
pub fn import<C: Classifier + ?Sized>(
    history: &mut History,
    format: Format,
    json: &str,
    classifier: &C,
) -> Result<ImportReport, ImportError> {
    let imported = stream::classify_str(format, json, ParseOptions::default(), classifier)?;
    Ok(classifying::record(
        history,
        imported.messages,
        imported.exit,
    ))
}
