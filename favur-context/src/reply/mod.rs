//! Replies in: a provider's answer turned into a [`Reply`], which must be classified
//! before it can be appended.
//!
//! [`Reply::from_openai`] reads an OpenAI Chat Completions response body and
//! [`Reply::from_anthropic`] an Anthropic Messages response body, [`Reply::from_responses`]
//! an OpenAI Responses body; [`ReplyStream`]
//! assembles either provider's streamed (server-sent events) answer into the same
//! [`Reply`]. A reply converts into a [`Message`] (`impl From<Reply> for Message`), so it
//! is appended with a class like any other message, `fuzzy!(message: reply)`; it carries
//! no class of its own, so `history.append(reply)` does not compile.
//!
//! ```
//! use favur_context::reply::{Reply, StopReason};
//! use favur_context::{fuzzy, History};
//! let body = r#"{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o",
//!   "choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
//!     "tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]}}],
//!   "usage":{"prompt_tokens":52,"completion_tokens":18,"total_tokens":70}}"#;
//! let reply = Reply::from_openai(body)?;
//! assert_eq!(reply.stop_reason(), &StopReason::ToolCalls);
//! let calls = reply.tool_calls();
//! assert_eq!(calls[0].name, "bash");
//! let mut history = History::new();
//! history.append(fuzzy!(message: reply));
//! assert_eq!(history.entries()[0].message().tool_calls().count(), 1);
//! # Ok::<(), favur_context::reply::ReplyError>(())
//! ```
//!
//! ```compile_fail
//! let reply = favur_context::reply::Reply::from_openai("{}").unwrap();
//! favur_context::History::new().append(reply); // a reply has no retention class
//! ```
//!
//! Text from the model is data: it goes into text parts and tool-call arguments as it is
//! (arguments that are not valid JSON are kept raw, see [`Arguments`](crate::message::Arguments)),
//! and nothing in it is read as structure.

mod anthropic;
mod openai;
mod responses;
mod sse;
mod stream;

use serde_json::Value;

use crate::model::message::{Message, Part, Role, ToolCall};

pub use sse::SseDecoder;
pub use stream::ReplyStream;

/// Why the model stopped.
///
/// ```
/// use favur_context::reply::StopReason;
/// assert_eq!(StopReason::from_openai("tool_calls"), StopReason::ToolCalls);
/// assert_eq!(StopReason::from_anthropic("tool_use"), StopReason::ToolCalls);
/// assert_eq!(StopReason::from_anthropic("pause_turn"), StopReason::Other("pause_turn".into()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The answer is complete (`stop`, `end_turn`, `stop_sequence`).
    EndTurn,
    /// The model asks for tool calls (`tool_calls`, `function_call`, `tool_use`).
    ToolCalls,
    /// The output-token limit cut the answer (`length`, `max_tokens`).
    MaxTokens,
    /// A content filter or a refusal stopped it (`content_filter`, `refusal`).
    Refused,
    /// A reason this library does not know, kept as the provider spelled it.
    Other(String),
    /// The provider gave none.
    Unknown,
}

impl StopReason {
    /// Reads an OpenAI `finish_reason`.
    ///
    /// ```
    /// assert_eq!(favur_context::reply::StopReason::from_openai("length"), favur_context::reply::StopReason::MaxTokens);
    /// ```
    pub fn from_openai(reason: &str) -> Self {
        match reason {
            "stop" => StopReason::EndTurn,
            "tool_calls" | "function_call" => StopReason::ToolCalls,
            "length" => StopReason::MaxTokens,
            "content_filter" => StopReason::Refused,
            other => StopReason::Other(other.to_owned()),
        }
    }

    /// Reads an Anthropic `stop_reason`.
    ///
    /// ```
    /// assert_eq!(favur_context::reply::StopReason::from_anthropic("end_turn"), favur_context::reply::StopReason::EndTurn);
    /// ```
    pub fn from_anthropic(reason: &str) -> Self {
        match reason {
            "end_turn" | "stop_sequence" => StopReason::EndTurn,
            "tool_use" => StopReason::ToolCalls,
            "max_tokens" => StopReason::MaxTokens,
            "refusal" => StopReason::Refused,
            other => StopReason::Other(other.to_owned()),
        }
    }
}

/// Tokens the provider reports for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Tokens of the request as the provider counted them (Anthropic: including cache
    /// reads and writes).
    pub input_tokens: u64,
    /// Tokens of the answer.
    pub output_tokens: u64,
}

/// A model's answer, parsed: an assistant message (text, then tool calls) with why it
/// stopped and what it cost. It has no retention class: classify it to append it
/// (`fuzzy!(message: reply)`, `strict!(message: reply)`, or
/// `Message::from(reply).classify(class)`).
///
/// ```
/// use favur_context::reply::Reply;
/// use favur_context::{strict, History};
/// let body = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
///   "content":[{"type":"text","text":"Plan: reproduce, then fix."}],
///   "stop_reason":"end_turn","usage":{"input_tokens":40,"output_tokens":9}}"#;
/// let reply = Reply::from_anthropic(body)?;
/// assert_eq!(reply.text(), "Plan: reproduce, then fix.");
/// assert!(reply.tool_calls().is_empty());
/// assert_eq!(reply.usage().unwrap().input_tokens, 40);
/// let mut h = History::new();
/// h.append(strict!(message: reply));
/// # Ok::<(), favur_context::reply::ReplyError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    message: Message,
    stop: StopReason,
    usage: Option<Usage>,
    refusal: Option<String>,
    model: Option<String>,
}

impl Reply {
    /// Builds a reply from its pieces (text may be empty; a refusal with no text becomes
    /// the message's text, so the history records what the model said).
    pub(crate) fn assemble(
        text: String,
        calls: Vec<ToolCall>,
        stop: StopReason,
        usage: Option<Usage>,
        refusal: Option<String>,
        model: Option<String>,
    ) -> Reply {
        let mut parts = Vec::with_capacity(calls.len() + 1);
        let refusal = refusal.filter(|r| !r.is_empty());
        if !text.is_empty() {
            parts.push(Part::Text(text));
        } else if let Some(r) = &refusal {
            parts.push(Part::Text(r.clone()));
        }
        parts.extend(calls.into_iter().map(Part::from));
        Reply {
            message: Message::new(Role::Assistant, parts),
            stop,
            usage,
            refusal,
            model,
        }
    }

    /// The same reply with `reasoning` first in its message (as the provider sent it,
    /// before the text and calls it led to).
    pub(crate) fn with_reasoning(
        mut self,
        reasoning: Vec<crate::model::parts::Reasoning>,
    ) -> Reply {
        self.message
            .parts
            .splice(0..0, reasoning.into_iter().map(Part::from));
        self
    }

    /// Parses an OpenAI Chat Completions response body (`choices[0]`).
    ///
    /// # Errors
    ///
    /// [`ReplyError::Json`] if it is not JSON, [`ReplyError::Api`] for an error body, and
    /// [`ReplyError::Malformed`] naming the field (`choices[0].message.tool_calls[1].id`)
    /// that is missing or of the wrong type.
    ///
    /// ```
    /// use favur_context::reply::{Reply, ReplyError};
    /// let err = Reply::from_openai(r#"{"choices":[{"message":{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"ls","arguments":"{}"}}]}}]}"#).unwrap_err();
    /// assert_eq!(err.to_string(), "malformed reply at choices[0].message.tool_calls[0].id: missing");
    /// ```
    pub fn from_openai(body: &str) -> Result<Reply, ReplyError> {
        openai::parse(&parse_json(body)?)
    }

    /// Parses an Anthropic Messages response body.
    ///
    /// # Errors
    ///
    /// As for [`from_openai`](Reply::from_openai), naming the content block
    /// (`content[2].input`).
    ///
    /// ```
    /// use favur_context::reply::Reply;
    /// let err = Reply::from_anthropic(r#"{"type":"message","content":[{"type":"tool_use","id":"t1","input":{}}]}"#).unwrap_err();
    /// assert_eq!(err.to_string(), "malformed reply at content[0].name: missing");
    /// ```
    pub fn from_anthropic(body: &str) -> Result<Reply, ReplyError> {
        anthropic::parse(&parse_json(body)?)
    }

    /// Parses an OpenAI Responses response body (`output`): reasoning items first (ids,
    /// summaries, `encrypted_content`), then the text, then the `function_call`s with
    /// their item ids, so that appending the reply sends the reasoning back with its
    /// calls.
    ///
    /// ```
    /// use favur_context::reply::{Reply, StopReason};
    /// let body = r#"{"id":"resp_1","status":"completed","model":"o4-mini","output":[
    ///   {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"list first"}],"encrypted_content":"ENC"},
    ///   {"type":"function_call","id":"fc_1","call_id":"call_1","name":"ls","arguments":"{}"}],
    ///   "usage":{"input_tokens":30,"output_tokens":12}}"#;
    /// let reply = Reply::from_responses(body)?;
    /// assert_eq!(reply.stop_reason(), &StopReason::ToolCalls);
    /// assert_eq!(reply.tool_calls()[0].provider_id.as_deref(), Some("fc_1"));
    /// assert_eq!(reply.message().reasoning().next().unwrap().encrypted.as_deref(), Some("ENC"));
    /// # Ok::<(), favur_context::reply::ReplyError>(())
    /// ```
    pub fn from_responses(body: &str) -> Result<Reply, ReplyError> {
        responses::parse(&parse_json(body)?)
    }

    /// The assistant message.
    ///
    /// ```
    /// let r = favur_context::reply::Reply::from_openai(r#"{"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}"#).unwrap();
    /// assert_eq!(r.message().role, favur_context::Role::Assistant);
    /// ```
    pub fn message(&self) -> &Message {
        &self.message
    }

    /// The text parts, joined by newlines.
    ///
    /// ```
    /// let r = favur_context::reply::Reply::from_openai(r#"{"choices":[{"message":{"content":"done"},"finish_reason":"stop"}]}"#).unwrap();
    /// assert_eq!(r.text(), "done");
    /// ```
    pub fn text(&self) -> String {
        self.message.text()
    }

    /// The tool calls to run, in order (a copy: the reply itself is then appended).
    ///
    /// ```
    /// let r = favur_context::reply::Reply::from_openai(r#"{"choices":[{"message":{"content":"done"},"finish_reason":"stop"}]}"#).unwrap();
    /// assert!(r.tool_calls().is_empty());
    /// ```
    pub fn tool_calls(&self) -> Vec<ToolCall> {
        self.message.tool_calls().cloned().collect()
    }

    /// Why the model stopped.
    ///
    /// ```
    /// let r = favur_context::reply::Reply::from_openai(r#"{"choices":[{"message":{"content":"…"},"finish_reason":"length"}]}"#).unwrap();
    /// assert_eq!(r.stop_reason(), &favur_context::reply::StopReason::MaxTokens);
    /// ```
    pub fn stop_reason(&self) -> &StopReason {
        &self.stop
    }

    /// The tokens the provider reported, if it did.
    ///
    /// ```
    /// let r = favur_context::reply::Reply::from_openai(r#"{"choices":[{"message":{"content":"x"}}]}"#).unwrap();
    /// assert!(r.usage().is_none());
    /// ```
    pub fn usage(&self) -> Option<Usage> {
        self.usage
    }

    /// The refusal text, if the model refused (OpenAI `message.refusal`).
    ///
    /// ```
    /// let r = favur_context::reply::Reply::from_openai(r#"{"choices":[{"message":{"content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}"#).unwrap();
    /// assert_eq!(r.refusal(), Some("I can't help with that."));
    /// assert_eq!(r.text(), "I can't help with that.");
    /// ```
    pub fn refusal(&self) -> Option<&str> {
        self.refusal.as_deref()
    }

    /// The model that answered, as the provider named it.
    ///
    /// ```
    /// let r = favur_context::reply::Reply::from_openai(r#"{"model":"gpt-4o","choices":[{"message":{"content":"x"}}]}"#).unwrap();
    /// assert_eq!(r.model(), Some("gpt-4o"));
    /// ```
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }
}

impl From<Reply> for Message {
    fn from(reply: Reply) -> Message {
        reply.message
    }
}

/// A provider's answer could not be read. Each variant says what is wrong and where.
///
/// ```
/// use favur_context::reply::{Reply, ReplyError};
/// let err = Reply::from_openai(r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#).unwrap_err();
/// assert!(matches!(err, ReplyError::Api { .. }));
/// assert_eq!(err.to_string(), "the provider answered with an error (requests): Rate limit reached");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplyError {
    /// The body (or an event's data) is not JSON.
    #[error("the reply is not JSON: {0}")]
    Json(String),
    /// The provider answered with an error object instead of a reply.
    #[error("the provider answered with an error{}: {message}", kind.as_ref().map(|k| format!(" ({k})")).unwrap_or_default())]
    Api {
        /// The provider's error type or code, if it gave one.
        kind: Option<String>,
        /// The provider's message.
        message: String,
    },
    /// A field is missing or of the wrong type.
    #[error("malformed reply at {at}: {problem}")]
    Malformed {
        /// Where, as a path into the body (`choices[0].message.tool_calls[1].function.name`).
        at: String,
        /// What is wrong.
        problem: String,
    },
    /// A streamed event is malformed or out of order.
    #[error("stream event {event}: {problem}")]
    Event {
        /// The event's index in the stream, from 0.
        event: usize,
        /// What is wrong, naming the field or content block.
        problem: String,
    },
    /// The stream ended before the reply was complete.
    #[error("incomplete stream: {0}")]
    Incomplete(String),
}

fn parse_json(body: &str) -> Result<Value, ReplyError> {
    serde_json::from_str(body).map_err(|e| ReplyError::Json(e.to_string()))
}

fn malformed(at: impl Into<String>, problem: impl Into<String>) -> ReplyError {
    ReplyError::Malformed {
        at: at.into(),
        problem: problem.into(),
    }
}

/// The JSON type of a value, for error messages.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `v[key]` as a string: `Ok(None)` when absent or null, an error for another type.
fn opt_str<'a>(v: &'a Value, key: &str, at: &str) -> Result<Option<&'a str>, ReplyError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(malformed(
            format!("{at}.{key}"),
            format!("expected a string, found {}", type_name(other)),
        )),
    }
}

/// `v[key]` as a string that must be there.
/// The elements of the array `v[key]`, numbered (none if it is missing or not an array).
fn elements<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = (usize, &'a Value)> {
    v.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
}

fn req_str<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a str, ReplyError> {
    opt_str(v, key, at)?.ok_or_else(|| malformed(format!("{at}.{key}"), "missing"))
}

/// `v[key]` as an unsigned integer, if it is one.
fn opt_u64(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

/// The error object of an error body (`{"error": {"message", "type"|"code"}}`), if any.
fn api_error(v: &Value) -> Option<ReplyError> {
    let e = v.get("error")?;
    if e.is_null() {
        return None;
    }
    let message = e
        .get("message")
        .and_then(Value::as_str)
        .map_or_else(|| e.to_string(), str::to_owned);
    let kind = ["type", "code"].iter().find_map(|k| match e.get(*k) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    });
    Some(ReplyError::Api { kind, message })
}

/// A whole response body: an object, not an API error, with the array `field` (the
/// OpenAI `choices`, the Anthropic `content`).
pub(super) fn body_array<'a>(v: &'a Value, field: &str) -> Result<&'a Vec<Value>, ReplyError> {
    if let Some(e) = api_error(v) {
        return Err(e);
    }
    if !v.is_object() {
        return Err(malformed(
            "the body",
            format!("expected an object, found {}", type_name(v)),
        ));
    }
    match v.get(field) {
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(malformed(
            field,
            format!("expected an array, found {}", type_name(other)),
        )),
        None => Err(malformed(field, "missing")),
    }
}
