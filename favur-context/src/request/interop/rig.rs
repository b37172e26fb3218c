//! Conversions between histories and [rig](https://docs.rs/rig-core)'s completion
//! message types (feature `rig`, rig-core without its default features: no HTTP or TLS
//! stack comes with it).
//!
//! [`chat_history`] gives the compacted view as rig `Message`s, for a
//! `CompletionRequest`'s `chat_history`; [`reply`] reads a rig `CompletionResponse` as
//! a [`Reply`] to classify and append. The view is rendered as
//! [`render_anthropic`] renders it (turns alternate, every result follows its call, a
//! tool result carries its error flag), then each block becomes its rig content.
//! Reasoning blocks are left out: this library sends a provider's reasoning only back to
//! that provider, and rig keeps its own.
//!
//! ```
//! use favur_context::interop::rig::{chat_history, reply, types};
//! use favur_context::{fuzzy, strict, History};
//!
//! let mut h = History::new();
//! h.pin(strict!(system: "You are a coding agent."));
//! h.append(strict!(user: "List the files."));
//! h.append(fuzzy!(tool_call: "c1", "bash", serde_json::json!({"command": "ls"})));
//! h.append(fuzzy!(tool_result("c1"): "src"));
//! let messages = chat_history(&h)?;
//! assert!(matches!(&messages[0], types::Message::System { content } if content == "You are a coding agent."));
//! assert_eq!(messages.len(), 4);
//!
//! // A rig completion back into the history.
//! let response = rig_core::completion::CompletionResponse::new(
//!     vec![types::AssistantContent::text("Only src.")],
//!     Default::default(),
//!     types::Origin::new("chat", "openai", "gpt-4.1"),
//!     serde_json::Value::Null,
//! );
//! h.append(fuzzy!(message: reply(&response)));
//! assert_eq!(h.last_assistant().map(|e| e.message().text()), Some("Only src.".into()));
//! # Ok::<(), favur_context::interop::rig::RigError>(())
//! ```

use std::collections::HashMap;

use ::rig_core::completion::CompletionResponse;
use ::rig_core::completion::message::{
    AssistantContent, AssistantMessage, CallId, Document, DocumentMediaType, DocumentSourceKind,
    Image, ImageMediaType, Message as RigMessage, MimeType, StopReason as RigStop, Text,
    ToolCall as RigCall, ToolFunction, ToolName, ToolResult as RigResult, ToolResultContent,
    UserContent,
};
use serde_json::Value;

/// rig-core's message types, re-exported so users of the feature can name them
/// without depending on the crate themselves.
pub use ::rig_core::completion::message as types;

use crate::history::History;
use crate::model::message::{Arguments, ToolCall};
use crate::reply::{Reply, StopReason, Usage};
use crate::request::render::render_anthropic;

/// A rendered message that rig's types cannot hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("message {index} does not fit rig's types: {message}")]
pub struct RigError {
    /// Index of the message in the rendered request (the system blocks first).
    pub index: usize,
    /// What did not fit.
    pub message: String,
}

/// The current view as rig messages: the pinned system blocks as `Message::System`,
/// then the turns as [`render_anthropic`] renders them (a user turn holds the tool
/// results of the calls before it). Put it in a `CompletionRequest`'s `chat_history`.
///
/// ```
/// use favur_context::interop::rig::{chat_history, types::{Message, UserContent}};
/// use favur_context::{strict, History};
/// let mut h = History::new();
/// h.append(strict!(user: "hi"));
/// let messages = chat_history(&h)?;
/// let Message::User { content } = &messages[0] else { panic!("a user turn") };
/// assert!(matches!(&content[0], UserContent::Text(t) if t.text() == "hi"));
/// # Ok::<(), favur_context::interop::rig::RigError>(())
/// ```
pub fn chat_history(history: &History) -> Result<Vec<RigMessage>, RigError> {
    let request = render_anthropic(history);
    let mut out = Vec::with_capacity(request.system.len() + request.messages.len());
    for (index, block) in request.system.iter().enumerate() {
        let text = block.get("text").and_then(Value::as_str);
        let text = text.ok_or_else(|| error(index, "a system block without text"))?;
        out.push(RigMessage::System {
            content: text.to_owned(),
        });
    }
    // The name of every call by its id: a rig result names the tool it answers.
    let mut names: HashMap<String, String> = HashMap::new();
    for (i, turn) in request.messages.iter().enumerate() {
        let index = request.system.len() + i;
        let blocks = turn.get("content").and_then(Value::as_array);
        let blocks = blocks.ok_or_else(|| error(index, "a turn without content blocks"))?;
        let message = match turn.get("role").and_then(Value::as_str) {
            Some("assistant") => assistant(blocks, &mut names).map_err(|m| error(index, &m))?,
            Some("user") => user(blocks, &names).map_err(|m| error(index, &m))?,
            _ => return Err(error(index, "a turn that is neither user nor assistant")),
        };
        out.extend(message);
    }
    Ok(out)
}

fn error(index: usize, message: &str) -> RigError {
    RigError {
        index,
        message: message.to_owned(),
    }
}

fn str_of<'v>(block: &'v Value, key: &str) -> Result<&'v str, String> {
    block
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("a block without `{key}`"))
}

/// An assistant turn (none when only reasoning was in it).
fn assistant(
    blocks: &[Value],
    names: &mut HashMap<String, String>,
) -> Result<Option<RigMessage>, String> {
    let mut content = Vec::with_capacity(blocks.len());
    for block in blocks {
        match str_of(block, "type")? {
            "text" => content.push(AssistantContent::Text(Text::new(str_of(block, "text")?))),
            "tool_use" => {
                let (id, name) = (str_of(block, "id")?, str_of(block, "name")?);
                let tool = ToolName::new(name).map_err(|e| e.to_string())?;
                let input = block.get("input").cloned().unwrap_or(Value::Null);
                names.insert(id.to_owned(), name.to_owned());
                let call = RigCall::new(CallId::from_wire(id), ToolFunction::new(tool, input));
                content.push(AssistantContent::ToolCall(call));
            }
            "thinking" | "redacted_thinking" => {}
            other => return Err(format!("an assistant block of type `{other}`")),
        }
    }
    Ok((!content.is_empty()).then(|| RigMessage::Assistant(AssistantMessage::new(content))))
}

/// A user turn: text, media and the results of the calls before it.
fn user(blocks: &[Value], names: &HashMap<String, String>) -> Result<Option<RigMessage>, String> {
    let mut content = Vec::with_capacity(blocks.len());
    for block in blocks {
        match str_of(block, "type")? {
            "text" => content.push(UserContent::Text(Text::new(str_of(block, "text")?))),
            "image" => content.push(UserContent::Image(image(block)?)),
            "document" => content.push(document(block)?),
            "tool_result" => content.push(UserContent::ToolResult(result(block, names)?)),
            other => return Err(format!("a user block of type `{other}`")),
        }
    }
    Ok((!content.is_empty()).then_some(RigMessage::User { content }))
}

fn result(block: &Value, names: &HashMap<String, String>) -> Result<RigResult, String> {
    let id = str_of(block, "tool_use_id")?;
    let name = names
        .get(id)
        .ok_or_else(|| format!("a result for `{id}` with no call before it"))?;
    let content = match block.get("content") {
        Some(Value::String(text)) => vec![ToolResultContent::Text(Text::new(text.as_str()))],
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|part| match str_of(part, "type")? {
                "text" => Ok(ToolResultContent::Text(Text::new(str_of(part, "text")?))),
                "image" => Ok(ToolResultContent::Image(image(part)?)),
                other => Err(format!("a tool result part of type `{other}`")),
            })
            .collect::<Result<_, String>>()?,
        _ => Vec::new(),
    };
    // rig refuses a result without content blocks: an empty output is one empty text.
    let content = if content.is_empty() {
        vec![ToolResultContent::Text(Text::new(""))]
    } else {
        content
    };
    Ok(RigResult {
        call: CallId::from_wire(id),
        name: ToolName::new(name.as_str()).map_err(|e| e.to_string())?,
        content,
        is_error: block.get("is_error").and_then(Value::as_bool) == Some(true),
    })
}

/// The source of an image or document block: its data and media type.
fn source(block: &Value) -> Result<(DocumentSourceKind, Option<&str>), String> {
    let source = block
        .get("source")
        .ok_or("a media block without `source`")?;
    let media_type = source.get("media_type").and_then(Value::as_str);
    let data = match str_of(source, "type")? {
        "base64" => DocumentSourceKind::Base64(str_of(source, "data")?.to_owned()),
        "url" => DocumentSourceKind::Url(str_of(source, "url")?.to_owned()),
        "text" => DocumentSourceKind::String(str_of(source, "data")?.to_owned()),
        other => return Err(format!("a media source of type `{other}`")),
    };
    Ok((data, media_type))
}

fn image(block: &Value) -> Result<Image, String> {
    let (data, media_type) = source(block)?;
    Ok(Image {
        data,
        media_type: media_type.and_then(ImageMediaType::from_mime_type),
        detail: None,
        native: None,
    })
}

fn document(block: &Value) -> Result<UserContent, String> {
    let (data, media_type) = source(block)?;
    Ok(UserContent::Document(Document {
        data,
        media_type: media_type.and_then(DocumentMediaType::from_mime_type),
        additional_params: None,
    }))
}

/// A rig completion as a [`Reply`]: its text blocks joined in order, its tool calls
/// with their ids as the provider sent them (a rig-issued id otherwise), why it stopped,
/// the tokens it used when the provider reported both counts, and the model the
/// provider reported. Reasoning and images in the reply are left out (see the module).
///
/// ```
/// use favur_context::interop::rig::{reply, types};
/// use favur_context::reply::StopReason;
/// let call = types::ToolCall::new(
///     types::CallId::from_wire("call_1"),
///     types::ToolFunction::new(types::ToolName::new("bash")?, serde_json::json!({"command": "ls"})),
/// );
/// let response = rig_core::completion::CompletionResponse::new(
///     vec![types::AssistantContent::text("Looking."), types::AssistantContent::ToolCall(call)],
///     Default::default(),
///     types::Origin::new("chat", "openai", "gpt-4.1"),
///     serde_json::Value::Null,
/// );
/// let r = reply(&response);
/// assert_eq!(r.text(), "Looking.");
/// assert_eq!(r.tool_calls()[0].id, "call_1");
/// assert_eq!(r.stop_reason(), &StopReason::ToolCalls);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn reply(response: &CompletionResponse) -> Reply {
    let mut text = String::new();
    let mut calls = Vec::new();
    for content in &response.choice {
        match content {
            AssistantContent::Text(t) => text.push_str(t.text()),
            AssistantContent::ToolCall(c) => {
                // Arguments that were not a JSON object are kept as the model sent them.
                let arguments = match &c.function.invalid_arguments {
                    Some(raw) => Arguments::Invalid(raw.clone()),
                    None => Arguments::Json(Value::Object(c.function.arguments.clone())),
                };
                calls.push(ToolCall::new(
                    c.id.wire().into_owned(),
                    c.function.name.to_string(),
                    arguments,
                ));
            }
            _ => {}
        }
    }
    let (stop, refusal) = match response.stop() {
        RigStop::Stop => (StopReason::EndTurn, None),
        RigStop::Length => (StopReason::MaxTokens, None),
        RigStop::ToolUse => (StopReason::ToolCalls, None),
        RigStop::Error(why) => (StopReason::Refused, Some(why)),
        RigStop::Aborted(why) => (StopReason::Other(format!("aborted: {why}")), None),
        other => (StopReason::Other(format!("{other:?}")), None),
    };
    let usage = match (response.usage.input_tokens, response.usage.output_tokens) {
        (Some(input_tokens), Some(output_tokens)) => Some(Usage {
            input_tokens,
            output_tokens,
        }),
        _ => None,
    };
    let model = response.model().map(str::to_owned);
    Reply::assemble(text, calls, stop, usage, refusal, model)
}
