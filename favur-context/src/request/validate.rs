//! Structural validators for provider requests: check a request before sending it.
//!
//! They check the structure providers reject with a 400 error (roles, content shapes, the
//! tool-call/result pairing, and for Anthropic the first-turn and alternation rules), not
//! model limits or tool schemas. Each returns the first problem found as a
//! [`ValidationError`] naming the message index and the [`Rule`] broken.
//!
//! The plain validators accept an *in-flight tail*: tool calls of the last assistant
//! message with no result yet (the caller is about to run them), whether or not results
//! of some of its other calls follow it at the end of the request. The `_strict` variants
//! report those as [`Rule::MissingResult`] too.
//!
//! ```
//! use favur_context::render::validate::{validate_openai, Rule};
//! let bad = serde_json::json!([{"role": "tool", "tool_call_id": "c1", "content": "ok"}]);
//! let err = validate_openai(&bad).unwrap_err();
//! assert_eq!(err.index, Some(0));
//! assert_eq!(err.rule, Rule::ResultWithoutCall { call_id: "c1".into() });
//! ```

use std::collections::HashSet;

use serde_json::{Map, Value};

mod anthropic;
mod anthropic_blocks;
mod chat_parts;
mod media_types;
mod responses;
pub use anthropic::{validate_anthropic, validate_anthropic_strict};
pub use anthropic_blocks::{DOCUMENT_MEDIA_TYPES, IMAGE_MEDIA_TYPES};
pub use media_types::{GEMINI_IMAGE_MEDIA_TYPES, OPENAI_IMAGE_MEDIA_TYPES};
pub use responses::validate_responses_strict;

/// A rule of a request format that a request breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Rule {
    /// The request is not a list of messages (or an object with a `messages` list).
    #[error("the request must be a JSON array of messages or an object with a `messages` array")]
    NotAList,
    /// There are no messages.
    #[error("the request must contain at least one message")]
    Empty,
    /// A message is not a JSON object.
    #[error("a message must be a JSON object")]
    NotAnObject,
    /// A message has no `role` string.
    #[error("the message has no `role` string")]
    MissingRole,
    /// A message's role is not one the format accepts.
    #[error("role `{0}` is not accepted here")]
    UnknownRole(String),
    /// The content is missing or of the wrong shape.
    #[error("bad content: {0}")]
    BadContent(String),
    /// A text block is empty or whitespace only (Anthropic).
    #[error("text content blocks must contain non-whitespace text")]
    EmptyText,
    /// A tool call is malformed.
    #[error("bad tool call: {0}")]
    BadToolCall(String),
    /// Tool-call arguments are not a string (OpenAI).
    #[error("tool call `{call_id}`: `function.arguments` must be a string")]
    ArgumentsNotString {
        /// The call.
        call_id: String,
    },
    /// Two tool calls share an id (within a message for OpenAI, within the request for
    /// Anthropic).
    #[error("tool call id `{call_id}` is used twice")]
    DuplicateCallId {
        /// The id.
        call_id: String,
    },
    /// A tool result does not answer a call of the assistant message before it.
    #[error(
        "tool result for `{call_id}` does not answer a call of the preceding assistant message"
    )]
    ResultWithoutCall {
        /// The id it names.
        call_id: String,
    },
    /// A call is answered twice.
    #[error("tool call `{call_id}` is answered more than once")]
    DuplicateResult {
        /// The call.
        call_id: String,
    },
    /// A call has no result before the conversation goes on (or at all, when strict).
    #[error("tool call `{call_id}` has no result directly after it")]
    MissingResult {
        /// The call.
        call_id: String,
    },
    /// A content block of this type is not allowed in this role (Anthropic).
    #[error("a `{block}` block is not allowed in a `{role}` message")]
    BlockNotAllowed {
        /// The block type.
        block: String,
        /// The role.
        role: String,
    },
    /// `tool_result` blocks must come before any other block of the user turn (Anthropic).
    #[error("tool_result blocks must come first in the user turn")]
    ResultNotFirst,
    /// The first message is not a user turn (Anthropic).
    #[error("the first message must be a user turn")]
    FirstNotUser,
    /// Two consecutive messages have the same role (Anthropic).
    #[error("roles must alternate between user and assistant")]
    NotAlternating,
    /// The `system` parameter (Gemini: `systemInstruction`) is malformed.
    #[error("bad system parameter: {0}")]
    BadSystem(String),
    /// A user turn answers more or fewer calls than the model turn before it made (Gemini).
    #[error("the turn has {responses} functionResponse part(s) for the {calls} call(s) before it")]
    ResponseCount {
        /// The `functionCall` parts of the model turn.
        calls: usize,
        /// The `functionResponse` parts of the user turn after it.
        responses: usize,
    },
    /// The `functionResponse` at `position` names another function (or id) than the call it answers in order (Gemini).
    #[error("functionResponse {position} is for `{found}`, the call it answers is `{expected}`")]
    ResponseMismatch {
        /// Its position among the turn's responses.
        position: usize,
        /// The call's name (or id).
        expected: String,
        /// The response's.
        found: String,
    },
    /// A `thoughtSignature` is not a non-empty string, or sits on a part that cannot carry one (Gemini).
    #[error("bad thoughtSignature: {0}")]
    BadThoughtSignature(String),
    /// More `cache_control` breakpoints than the API allows (Anthropic: 4).
    #[error("{found} cache_control breakpoints, at most {max} are allowed")]
    TooManyCacheBreakpoints {
        /// How many the request has.
        found: usize,
        /// The limit.
        max: usize,
    },
    /// A `cache_control` is malformed or on a block that cannot carry one (Anthropic).
    #[error("bad cache_control: {0}")]
    BadCacheControl(String),
    /// A thinking block comes after a text or tool_use block of its turn (Anthropic).
    #[error("thinking blocks must come before the text and tool_use blocks of their turn")]
    ThinkingNotFirst,
    /// A thinking block has no signature (Anthropic).
    #[error("a thinking block needs a non-empty `signature`")]
    MissingSignature,
    /// An image or document has a media type the format does not accept.
    #[error("media type `{media_type}` is not accepted here")]
    BadMediaType {
        /// The media type (empty if missing).
        media_type: String,
    },
    /// An image or document source is malformed.
    #[error("bad source: {0}")]
    BadSource(String),
    /// A `function_call` that came with reasoning is not preceded by its `reasoning` item
    /// (Responses).
    #[error("function_call `{call_id}` is not preceded by the reasoning item it came with")]
    MissingReasoning {
        /// The call.
        call_id: String,
    },
    /// A `reasoning` item has no id, or no `encrypted_content` in a `store: false`
    /// request (Responses).
    #[error("bad reasoning item: {0}")]
    BadReasoning(String),
    /// An item id is used twice (Responses).
    #[error("item id `{id}` is used twice")]
    DuplicateId {
        /// The id.
        id: String,
    },
}

mod cache_control;
mod gemini;
pub use cache_control::MAX_CACHE_BREAKPOINTS;
pub use gemini::{validate_gemini, validate_gemini_strict};

/// A request that breaks a rule: where (the message index, `None` for the request as a
/// whole or its `system` parameter) and which rule.
///
/// ```
/// use favur_context::render::validate::{validate_anthropic, Rule};
/// let err = validate_anthropic(&serde_json::json!({"messages": [{"role": "assistant", "content": "hi"}]})).unwrap_err();
/// assert_eq!((err.index, err.rule.clone()), (Some(0), Rule::FirstNotUser));
/// assert_eq!(err.to_string(), "message 0: the first message must be a user turn");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{rule}", match index { Some(i) => format!("message {i}: "), None => String::new() })]
pub struct ValidationError {
    /// The index of the offending message in `messages`.
    pub index: Option<usize>,
    /// The rule broken.
    pub rule: Rule,
}

pub(crate) fn err(index: Option<usize>, rule: Rule) -> ValidationError {
    ValidationError { index, rule }
}

/// A rule about one tool call (`rule` makes it from the call's id), broken at `index`:
/// `call_err(at, id, |call_id| Rule::DuplicateResult { call_id })`.
fn call_err(
    index: Option<usize>,
    call_id: impl Into<String>,
    rule: impl FnOnce(String) -> Rule,
) -> ValidationError {
    err(index, rule(call_id.into()))
}

/// Message `index` as an object, and its `role` string.
fn object_and_role(
    index: Option<usize>,
    m: &Value,
) -> Result<(&Map<String, Value>, &str), ValidationError> {
    let Value::Object(obj) = m else {
        return Err(err(index, Rule::NotAnObject));
    };
    let Some(role) = obj.get("role").and_then(Value::as_str) else {
        return Err(err(index, Rule::MissingRole));
    };
    Ok((obj, role))
}

/// The turns of a conversation between the user and one other role (Anthropic's
/// `assistant`, Gemini's `model`): the first turn is the user's and roles alternate.
struct Turns<'a> {
    other: &'static str,
    prev: Option<&'a str>,
}

impl<'a> Turns<'a> {
    fn new(other: &'static str) -> Self {
        Turns { other, prev: None }
    }

    /// Turn `i`, as an object, and its role.
    fn next(
        &mut self,
        i: usize,
        m: &'a Value,
    ) -> Result<(&'a Map<String, Value>, &'a str), ValidationError> {
        let at = Some(i);
        let (obj, role) = object_and_role(at, m)?;
        if role != "user" && role != self.other {
            return Err(err(at, Rule::UnknownRole(role.to_owned())));
        }
        if i == 0 && role != "user" {
            return Err(err(at, Rule::FirstNotUser));
        }
        if self.prev == Some(role) {
            return Err(err(at, Rule::NotAlternating));
        }
        self.prev = Some(role);
        Ok((obj, role))
    }
}

/// A tool result for `call_id` at `index` (Anthropic, Responses): it answers a call it may
/// answer (`called`), and no call is answered twice.
fn answer<'a>(
    index: Option<usize>,
    call_id: &'a str,
    called: bool,
    answered: &mut HashSet<&'a str>,
) -> Result<(), ValidationError> {
    if !called {
        return Err(call_err(index, call_id, |call_id| {
            Rule::ResultWithoutCall { call_id }
        }));
    }
    if !answered.insert(call_id) {
        return Err(call_err(index, call_id, |call_id| Rule::DuplicateResult {
            call_id,
        }));
    }
    Ok(())
}

/// A `block` (content block or part kind) is not allowed in a message of `role`.
pub(crate) fn not_allowed(index: Option<usize>, block: &str, role: &str) -> ValidationError {
    let (block, role) = (block.to_owned(), role.to_owned());
    err(index, Rule::BlockNotAllowed { block, role })
}

fn messages(request: &Value) -> Result<&Vec<Value>, ValidationError> {
    let list = match request {
        Value::Array(a) => a,
        Value::Object(o) => match o.get("messages") {
            Some(Value::Array(a)) => a,
            _ => return Err(err(None, Rule::NotAList)),
        },
        _ => return Err(err(None, Rule::NotAList)),
    };
    if list.is_empty() {
        return Err(err(None, Rule::Empty));
    }
    Ok(list)
}

/// Validates OpenAI Chat Completions `messages` (the array, or a request object holding
/// it), accepting an in-flight tail of unanswered calls in the last message.
///
/// Rules: each message is an object with a known role (`system`, `developer`, `user`,
/// `assistant`, `tool`); content is a string or an array of parts (the assistant may
/// have `null` content when it has `tool_calls`); each tool call has a non-empty
/// `id` unique in its message, `type: "function"`, a `function.name` and string
/// `function.arguments`; an assistant message with calls is followed directly by one
/// `tool` message per call (in any order) before any other message; each `tool` message
/// answers a call of that assistant message.
///
/// ```
/// let messages = serde_json::json!([
///     {"role": "user", "content": "list files"},
///     {"role": "assistant", "content": null, "tool_calls": [
///         {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]},
///     {"role": "tool", "tool_call_id": "c1", "content": "a.rs"},
/// ]);
/// favur_context::render::validate::validate_openai(&messages).unwrap();
/// ```
pub fn validate_openai(request: &Value) -> Result<(), ValidationError> {
    openai(request, false)
}

/// [`validate_openai`], but calls without a result at the end are an error too.
///
/// ```
/// let messages = serde_json::json!([
///     {"role": "user", "content": "go"},
///     {"role": "assistant", "content": null, "tool_calls": [
///         {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
/// ]);
/// assert!(favur_context::render::validate::validate_openai(&messages).is_ok());
/// assert!(favur_context::render::validate::validate_openai_strict(&messages).is_err());
/// ```
pub fn validate_openai_strict(request: &Value) -> Result<(), ValidationError> {
    openai(request, true)
}

fn openai_content(c: Option<&Value>, allow_null: bool, role: &str) -> Result<(), Rule> {
    match c {
        Some(Value::String(_)) => Ok(()),
        Some(Value::Null) | None if allow_null => Ok(()),
        Some(Value::Array(parts)) if !parts.is_empty() => {
            for p in parts {
                match p.get("type").and_then(Value::as_str) {
                    Some("text") if p.get("text").is_some_and(Value::is_string) => {}
                    Some("text") => {
                        return Err(Rule::BadContent("a text part needs a `text` string".into()));
                    }
                    Some(kind) => chat_parts::check(kind, p, role)?,
                    None => return Err(Rule::BadContent("a content part needs a `type`".into())),
                }
            }
            Ok(())
        }
        Some(Value::Array(_)) => Err(Rule::BadContent("empty content array".into())),
        None | Some(Value::Null) => Err(Rule::BadContent("content is required".into())),
        Some(_) => Err(Rule::BadContent(
            "content must be a string or an array of parts".into(),
        )),
    }
}

/// The calls of the last assistant message still waiting for a result, in the order
/// made: O(1) to answer one, amortized O(1) to name the first still open.
#[derive(Default)]
struct Pending {
    order: Vec<String>,
    head: usize,
    open: HashSet<String>,
}

impl Pending {
    fn push(&mut self, id: String) {
        self.open.insert(id.clone());
        self.order.push(id);
    }

    fn answer(&mut self, id: &str) -> bool {
        self.open.remove(id)
    }

    fn first(&mut self) -> Option<&String> {
        while self
            .order
            .get(self.head)
            .is_some_and(|id| !self.open.contains(id))
        {
            self.head += 1;
        }
        self.order.get(self.head)
    }
}

fn openai(request: &Value, strict: bool) -> Result<(), ValidationError> {
    let list = messages(request)?;
    // Calls of the last assistant message still waiting for a result, and where it was.
    let mut open = Pending::default();
    let mut open_at = 0usize;
    let mut answered: HashSet<String> = HashSet::new();
    for (i, m) in list.iter().enumerate() {
        let at = Some(i);
        let (obj, role) = object_and_role(at, m)?;
        if role != "tool"
            && let Some(call_id) = open.first()
        {
            return Err(call_err(Some(open_at), call_id, |call_id| {
                Rule::MissingResult { call_id }
            }));
        }
        match role {
            "system" | "developer" | "user" => {
                openai_content(obj.get("content"), false, role).map_err(|r| err(at, r))?;
                answered.clear();
            }
            "assistant" => {
                answered.clear();
                let calls = match obj.get("tool_calls") {
                    None | Some(Value::Null) => &[][..],
                    Some(Value::Array(a)) if !a.is_empty() => &a[..],
                    Some(_) => {
                        return Err(err(
                            at,
                            Rule::BadToolCall("`tool_calls` must be a non-empty array".into()),
                        ));
                    }
                };
                openai_content(obj.get("content"), !calls.is_empty(), role)
                    .map_err(|r| err(at, r))?;
                let mut ids = HashSet::new();
                for call in calls {
                    let id = openai_call(at, call)?;
                    if !ids.insert(id) {
                        return Err(call_err(at, id, |call_id| Rule::DuplicateCallId {
                            call_id,
                        }));
                    }
                    open.push(id.to_owned());
                }
                open_at = i;
            }
            "tool" => {
                let Some(id) = obj.get("tool_call_id").and_then(Value::as_str) else {
                    return Err(err(
                        at,
                        Rule::BadContent("a tool message needs a `tool_call_id` string".into()),
                    ));
                };
                openai_content(obj.get("content"), false, role).map_err(|r| err(at, r))?;
                if open.answer(id) {
                    answered.insert(id.to_owned());
                } else if answered.contains(id) {
                    return Err(call_err(at, id, |call_id| Rule::DuplicateResult {
                        call_id,
                    }));
                } else {
                    return Err(call_err(at, id, |call_id| Rule::ResultWithoutCall {
                        call_id,
                    }));
                }
            }
            other => return Err(err(at, Rule::UnknownRole(other.to_owned()))),
        }
    }
    if strict && let Some(call_id) = open.first() {
        return Err(call_err(Some(open_at), call_id, |call_id| {
            Rule::MissingResult { call_id }
        }));
    }
    Ok(())
}

/// A call of an assistant message: a non-empty `id`, `type: "function"`, a
/// `function.name` and string `function.arguments`; returns its id.
fn openai_call(at: Option<usize>, call: &Value) -> Result<&str, ValidationError> {
    let id = call
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            err(
                at,
                Rule::BadToolCall("a call needs a non-empty `id`".into()),
            )
        })?;
    if call.get("type").and_then(Value::as_str) != Some("function") {
        return Err(err(
            at,
            Rule::BadToolCall(format!("call `{id}` needs `type: \"function\"`")),
        ));
    }
    let f = call.get("function");
    if f.and_then(|f| f.get("name"))
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err(err(
            at,
            Rule::BadToolCall(format!("call `{id}` needs a `function.name`")),
        ));
    }
    if !f
        .and_then(|f| f.get("arguments"))
        .is_some_and(Value::is_string)
    {
        return Err(call_err(at, id, |call_id| Rule::ArgumentsNotString {
            call_id,
        }));
    }
    Ok(id)
}
