//! The message model: roles, content parts, tool calls and results.
//!
//! A [`Message`] is plain data and carries no retention class. It cannot enter a
//! [`History`](crate::History) until it is classified (see [`crate::Classified`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::parts::{Media, Reasoning};

/// Who a message is from.
///
/// ```
/// use favur_context::Role;
/// assert_eq!(serde_json::to_string(&Role::Tool).unwrap(), "\"tool\"");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions to the model (a system prompt).
    System,
    /// A person, or the agent speaking for one.
    User,
    /// The model.
    Assistant,
    /// The output of a tool the model called.
    Tool,
}

named_variants! {
    /// The lowercase name (`"system"`, `"user"`, `"assistant"`, `"tool"`).
    Role { System => "system", User => "user", Assistant => "assistant", Tool => "tool" }
}

/// The arguments of a tool call: parsed JSON, or the raw text when the model produced
/// invalid JSON (kept verbatim so nothing is lost and the error can be reported).
///
/// ```
/// use favur_context::message::Arguments;
/// assert_eq!(Arguments::parse(r#"{"path":"src"}"#), Arguments::Json(serde_json::json!({"path": "src"})));
/// assert_eq!(Arguments::parse("{oops"), Arguments::Invalid("{oops".to_owned()));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arguments {
    /// Well-formed JSON arguments.
    Json(Value),
    /// The raw string the model produced, which is not valid JSON.
    Invalid(String),
}

impl Arguments {
    /// Parses `raw` as JSON, keeping it verbatim as [`Arguments::Invalid`] if it is not.
    ///
    /// ```
    /// use favur_context::message::Arguments;
    /// assert!(Arguments::parse("[1, 2]").as_json().is_some());
    /// assert!(Arguments::parse("[1, 2").as_json().is_none());
    /// ```
    pub fn parse(raw: impl Into<String>) -> Self {
        let raw = raw.into();
        match serde_json::from_str(&raw) {
            Ok(value) => Arguments::Json(value),
            Err(_) => Arguments::Invalid(raw),
        }
    }

    /// The parsed value, if the arguments were valid JSON.
    ///
    /// ```
    /// use favur_context::message::Arguments;
    /// assert_eq!(Arguments::parse("3").as_json(), Some(&serde_json::json!(3)));
    /// ```
    pub fn as_json(&self) -> Option<&Value> {
        match self {
            Arguments::Json(v) => Some(v),
            Arguments::Invalid(_) => None,
        }
    }

    /// The arguments as a JSON string: the serialized value, or the raw invalid text.
    ///
    /// ```
    /// use favur_context::message::Arguments;
    /// assert_eq!(Arguments::parse(r#"{"a":1}"#).to_json_string(), r#"{"a":1}"#);
    /// assert_eq!(Arguments::parse("{a").to_json_string(), "{a");
    /// ```
    pub fn to_json_string(&self) -> String {
        match self {
            // What `Display` writes, without the formatter between (a JSON value always
            // serializes).
            Arguments::Json(v) => serde_json::to_string(v).unwrap_or_else(|_| v.to_string()),
            Arguments::Invalid(raw) => raw.clone(),
        }
    }
}

impl From<Value> for Arguments {
    fn from(value: Value) -> Self {
        Arguments::Json(value)
    }
}

impl From<&str> for Arguments {
    fn from(raw: &str) -> Self {
        Arguments::parse(raw)
    }
}

impl From<String> for Arguments {
    fn from(raw: String) -> Self {
        Arguments::parse(raw)
    }
}

/// A request from the model to run a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for this call; results answer it by this id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, parsed or raw.
    pub arguments: Arguments,
    /// The provider's id for the call item when it differs from [`id`](Self::id) (OpenAI
    /// Responses: the `function_call` item's `fc_...` id; `id` holds its `call_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
}

impl ToolCall {
    /// A tool call; `arguments` may be a [`serde_json::Value`] or a JSON string.
    ///
    /// ```
    /// use favur_context::message::Arguments;
    /// use favur_context::ToolCall;
    /// let call = ToolCall::new("c1", "read", r#"{"path":"a.rs"}"#);
    /// assert!(matches!(call.arguments, Arguments::Json(_)));
    /// ```
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<Arguments>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            provider_id: None,
        }
    }

    /// The same call with the provider's item id (see [`provider_id`](Self::provider_id)).
    pub fn with_provider_id(mut self, id: impl Into<String>) -> Self {
        self.provider_id = Some(id.into());
        self
    }
}

/// Why the tool calls of a message cannot be paired with their results unambiguously:
/// an empty id, two calls of the message with the same id (which result answers
/// which?), or a call no request can carry (an empty tool name). Refused by every fallible way in (import, [`History::insert`](crate::History::insert),
/// [`Store::record`](crate::Store::record), a journal or a JSON document read back).
///
/// ```
/// use favur_context::message::CallIdError;
/// use favur_context::{Message, ToolCall};
/// let twice = Message::assistant_calls(vec![ToolCall::new("c1", "ls", "{}"), ToolCall::new("c1", "rm", "{}")]);
/// assert_eq!(twice.check_call_ids(), Err(CallIdError::Duplicate { id: "c1".into() }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallIdError {
    /// A call has an empty id.
    #[error("tool call `{name}` has an empty id")]
    Empty {
        /// The call's tool name.
        name: String,
    },
    /// A call has an empty tool name (no request can carry it).
    #[error("tool call `{id}` has an empty tool name")]
    EmptyName {
        /// The call's id.
        id: String,
    },
    /// Two calls of one message share an id.
    #[error("two tool calls of one message have the id `{id}`")]
    Duplicate {
        /// The id.
        id: String,
    },
}

/// Checks that `calls` (those of one message) have non-empty, distinct ids and names.
pub(crate) fn check_call_ids<'a>(
    calls: impl IntoIterator<Item = &'a ToolCall>,
) -> Result<(), CallIdError> {
    let mut seen = std::collections::HashSet::new();
    for call in calls {
        if call.id.is_empty() {
            return Err(CallIdError::Empty {
                name: call.name.clone(),
            });
        }
        if call.name.is_empty() {
            return Err(CallIdError::EmptyName {
                id: call.id.clone(),
            });
        }
        if !seen.insert(call.id.as_str()) {
            return Err(CallIdError::Duplicate {
                id: call.id.clone(),
            });
        }
    }
    Ok(())
}

/// The output of a tool call, answering it by id.
///
/// ```
/// use favur_context::message::ToolResult;
/// let result = ToolResult { call_id: "c1".into(), content: "ok".into(), is_error: false };
/// // `is_error` is left out when false.
/// assert_eq!(serde_json::to_string(&result).unwrap(), r#"{"call_id":"c1","content":"ok"}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the [`ToolCall`] this answers.
    pub call_id: String,
    /// What the tool printed or returned.
    pub content: String,
    /// Whether the tool failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// One piece of a message's content.
///
/// A part is 56 bytes: text and tool results (nearly every part) are held inline; tool
/// calls, reasoning and media, larger and rarer, behind a box (build them with
/// [`From`]: `Part::from(call)`). The box changes nothing in how a part serializes.
///
/// ```
/// use favur_context::message::Part;
/// use favur_context::ToolCall;
/// let part = Part::Text("hello".into());
/// assert_eq!(part.text(), Some("hello"));
/// let call = Part::from(ToolCall::new("c1", "ls", "{}"));
/// assert!(matches!(&call, Part::ToolCall(c) if c.name == "ls"));
/// assert!(std::mem::size_of::<Part>() <= 56);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Plain text.
    Text(#[serde(with = "text_part")] String),
    /// A tool call made by the assistant.
    ToolCall(Box<ToolCall>),
    /// A tool's result.
    ToolResult(ToolResult),
    /// A model's reasoning, kept for the tool calls of its message (see [`Reasoning`]).
    Reasoning(Box<Reasoning>),
    /// An image (see [`Media`]).
    Image(Box<Media>),
    /// A document, e.g. a PDF (see [`Media`]).
    Document(Box<Media>),
}

impl From<ToolCall> for Part {
    /// A [`Part::ToolCall`].
    ///
    /// ```
    /// use favur_context::message::Part;
    /// use favur_context::ToolCall;
    /// let part: Part = ToolCall::new("c1", "ls", "{}").into();
    /// assert!(matches!(part, Part::ToolCall(_)));
    /// ```
    fn from(call: ToolCall) -> Self {
        Part::ToolCall(Box::new(call))
    }
}

impl From<ToolResult> for Part {
    /// A [`Part::ToolResult`].
    fn from(result: ToolResult) -> Self {
        Part::ToolResult(result)
    }
}

impl From<Reasoning> for Part {
    /// A [`Part::Reasoning`].
    fn from(reasoning: Reasoning) -> Self {
        Part::Reasoning(Box::new(reasoning))
    }
}

mod text_part {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Text<T> {
        text: T,
    }

    pub fn serialize<S: Serializer>(text: &str, s: S) -> Result<S::Ok, S::Error> {
        Text { text }.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        Text::<String>::deserialize(d).map(|t| t.text)
    }
}

impl Part {
    /// The text of a text part.
    pub fn text(&self) -> Option<&str> {
        match self {
            Part::Text(t) => Some(t),
            _ => None,
        }
    }
}

/// A message: a role, content parts, and provider-specific extension fields that
/// round-trip untouched.
///
/// A `Message` has no retention class and cannot be appended as it is; classify it
/// with one of the macros or [`Message::classify`].
///
/// ```
/// use favur_context::{Message, Role};
/// let m = Message::user("list the files");
/// assert_eq!(m.role, Role::User);
/// assert_eq!(m.text(), "list the files");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who it is from.
    pub role: Role,
    /// Its content, in order.
    pub parts: Vec<Part>,
    /// Provider-specific fields kept verbatim (e.g. `cache_control`, `name`).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extensions: Map<String, Value>,
}

impl Message {
    /// A message with the given role and parts and no extensions.
    ///
    /// ```
    /// use favur_context::message::Part;
    /// use favur_context::{Message, Role};
    /// let m = Message::new(Role::Assistant, vec![Part::Text("done".into())]);
    /// assert_eq!(m.text(), "done");
    /// ```
    pub fn new(role: Role, parts: Vec<Part>) -> Self {
        Message {
            role,
            parts,
            extensions: Map::new(),
        }
    }

    /// A system message with one text part.
    pub fn system(text: impl Into<String>) -> Self {
        Message::new(Role::System, vec![Part::Text(text.into())])
    }

    /// A user message with one text part.
    pub fn user(text: impl Into<String>) -> Self {
        Message::new(Role::User, vec![Part::Text(text.into())])
    }

    /// An assistant message with one text part.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::new(Role::Assistant, vec![Part::Text(text.into())])
    }

    /// An assistant message that makes the given tool calls.
    pub fn assistant_calls(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        Message::new(Role::Assistant, calls.into_iter().map(Part::from).collect())
    }

    /// Whether its tool calls can be paired unambiguously and sent: every id non-empty,
    /// no id twice in the message, every tool name non-empty. Building a message never
    /// fails (and [`History::append`](crate::History::append) records it as it is,
    /// rendering each repeated id as a distinct one, an empty id as `call` and an empty
    /// name as `tool`, and answering the calls in order); every fallible way into a
    /// history refuses one that fails this.
    ///
    /// ```
    /// use favur_context::message::CallIdError;
    /// use favur_context::{Message, ToolCall};
    /// assert!(Message::assistant_calls(vec![ToolCall::new("a", "ls", "{}"), ToolCall::new("b", "ls", "{}")]).check_call_ids().is_ok());
    /// let empty = Message::assistant_calls(vec![ToolCall::new("", "ls", "{}")]);
    /// assert!(matches!(empty.check_call_ids(), Err(CallIdError::Empty { .. })));
    /// let unnamed = Message::assistant_calls(vec![ToolCall::new("a", "", "{}")]);
    /// assert!(matches!(unnamed.check_call_ids(), Err(CallIdError::EmptyName { .. })));
    /// ```
    pub fn check_call_ids(&self) -> Result<(), CallIdError> {
        check_call_ids(self.tool_calls())
    }

    /// A tool message carrying one result.
    pub fn tool_result(
        call_id: impl Into<String>,
        content: impl Into<String>,
        is_error: bool,
    ) -> Self {
        Message::new(
            Role::Tool,
            vec![Part::ToolResult(ToolResult {
                call_id: call_id.into(),
                content: content.into(),
                is_error,
            })],
        )
    }

    /// Adds a provider-specific field, kept verbatim.
    pub fn with_extension(mut self, key: impl Into<String>, value: Value) -> Self {
        self.extensions.insert(key.into(), value);
        self
    }

    /// The text parts joined by newlines (tool calls and results excluded).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for t in self.parts.iter().filter_map(Part::text) {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(t);
        }
        out
    }

    /// Gives back the spare capacity of its parts and texts (a message built by pushing
    /// text, as tool output is, holds up to twice its length).
    pub(crate) fn shrink_to_fit(&mut self) {
        self.parts.shrink_to_fit();
        for part in &mut self.parts {
            match part {
                Part::Text(t) => t.shrink_to_fit(),
                Part::ToolCall(c) => {
                    c.id.shrink_to_fit();
                    c.name.shrink_to_fit();
                    if let Arguments::Invalid(raw) = &mut c.arguments {
                        raw.shrink_to_fit();
                    }
                }
                Part::ToolResult(r) => {
                    r.call_id.shrink_to_fit();
                    r.content.shrink_to_fit();
                }
                Part::Reasoning(r) => r.shrink_to_fit(),
                Part::Image(m) | Part::Document(m) => m.shrink_to_fit(),
            }
        }
    }

    /// The tool calls in this message.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.parts.iter().filter_map(|p| match p {
            Part::ToolCall(c) => Some(&**c),
            _ => None,
        })
    }

    /// The reasoning parts in this message.
    pub fn reasoning(&self) -> impl Iterator<Item = &Reasoning> {
        self.parts.iter().filter_map(|p| match p {
            Part::Reasoning(r) => Some(&**r),
            _ => None,
        })
    }

    /// The tool results in this message.
    pub fn tool_results(&self) -> impl Iterator<Item = &ToolResult> {
        self.parts.iter().filter_map(|p| match p {
            Part::ToolResult(r) => Some(r),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_appended_message_holds_no_spare_capacity() {
        let mut text = String::with_capacity(4096);
        text.push_str("Cargo.toml\nsrc");
        let mut h = crate::History::new();
        h.append(Message::tool_result("c1", text, false).classify(crate::Retention::Fuzzy));
        let Some(Part::ToolResult(r)) = h.entries()[0].message().parts.first() else {
            panic!("a tool result was appended");
        };
        assert_eq!(r.content, "Cargo.toml\nsrc");
        assert_eq!(r.content.capacity(), r.content.len());
    }
}
