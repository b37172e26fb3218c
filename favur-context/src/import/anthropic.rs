//! Anthropic Messages (`system` + `messages` with content blocks): text, tool use and
//! results, thinking and redacted thinking (assistant turns), images and documents (user
//! turns and tool results).

use std::borrow::Borrow;

use serde_json::{Map, Value};

use super::{Calls, ImportError, Sink, TranscriptMessage, bad, msg, nonempty_str, object, role_of};
use crate::model::message::{Arguments, Message, Part, Role, ToolCall, ToolResult};

fn cache_control(block: &Value, ext: &mut Map<String, Value>) {
    if let Some(cc) = block.get("cache_control") {
        ext.insert("cache_control".into(), cc.clone());
    }
}

fn system(value: Option<&Value>) -> Result<Vec<TranscriptMessage>, ImportError> {
    let mut out = Vec::new();
    match value {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => {
            let mut m = msg(0, None, Message::system(s.clone()));
            m.pin = true;
            out.push(m);
        }
        Some(Value::Array(blocks)) => {
            for (k, b) in blocks.iter().enumerate() {
                let text = match (b.get("type").and_then(Value::as_str), b.get("text")) {
                    (Some("text"), Some(Value::String(t))) => t.clone(),
                    _ => {
                        return Err(ImportError::Shape(format!(
                            "system block {k} is not a text block"
                        )));
                    }
                };
                let mut message = Message::system(text);
                cache_control(b, &mut message.extensions);
                let mut m = msg(0, Some(k), message);
                m.pin = true;
                out.push(m);
            }
        }
        Some(_) => {
            return Err(ImportError::Shape(
                "`system` must be a string or an array of text blocks".into(),
            ));
        }
    }
    Ok(out)
}

/// A tool result's text, and the images and documents it returned.
fn result_content(
    index: usize,
    content: Option<&Value>,
) -> Result<(String, Vec<Part>), ImportError> {
    match content {
        None | Some(Value::Null) => Ok((String::new(), Vec::new())),
        Some(Value::String(s)) => Ok((s.clone(), Vec::new())),
        Some(Value::Array(blocks)) => {
            let mut texts = Vec::with_capacity(blocks.len());
            let mut media = Vec::new();
            for (k, b) in blocks.iter().enumerate() {
                match (b.get("type").and_then(Value::as_str), b.get("text")) {
                    (Some("text"), Some(Value::String(t))) => texts.push(t.as_str()),
                    (Some("image" | "document"), _) => {
                        media.push(super::parts::anthropic_media(index, k, b)?);
                    }
                    (Some(other), _) => {
                        return Err(bad(
                            index,
                            format!(
                                "tool_result content of type `{other}` is not supported (text, image, document)"
                            ),
                        ));
                    }
                    _ => return Err(bad(index, "tool_result content block has no `type`")),
                }
            }
            Ok((texts.join("\n"), media))
        }
        Some(_) => Err(bad(
            index,
            "tool_result `content` must be a string or blocks",
        )),
    }
}

/// Reads the `system` parameter, then the messages one by one, handing each message to
/// `sink` (Anthropic has no exit record).
pub(super) fn parse_each<M: Borrow<Value>>(
    system_param: Option<&Value>,
    list: impl Iterator<Item = Result<M, ImportError>>,
    sink: &mut Sink<'_>,
) -> Result<Option<String>, ImportError> {
    for m in system(system_param)? {
        sink(m)?;
    }
    let mut calls = Calls::default();
    for (index, m) in list.enumerate() {
        let m = m?;
        message(index, m.borrow(), &mut calls, sink)?;
    }
    Ok(None)
}

/// One message: its tool results each go to `sink` as a tool message of their own, then
/// the rest of its blocks as one message (with the first text's block index when a
/// user message starts with something else).
fn message(
    index: usize,
    m: &Value,
    calls: &mut Calls,
    sink: &mut Sink<'_>,
) -> Result<(), ImportError> {
    let obj = object(index, m)?;
    let role = message_role(index, obj)?;
    let blocks = content_blocks(index, obj)?;
    let mut parts = Vec::new();
    let mut ext = Map::new();
    let mut first_text = None;
    for (k, b) in blocks.iter().enumerate() {
        let kind = b.get("type").and_then(Value::as_str);
        match (kind, role) {
            (Some("text"), _) => {
                let Some(Value::String(t)) = b.get("text") else {
                    return Err(bad(index, format!("text block {k} has no `text` string")));
                };
                parts.push(Part::Text(t.clone()));
                first_text.get_or_insert(k);
                cache_control(b, &mut ext);
            }
            (Some("tool_use"), Role::Assistant) => {
                parts.push(tool_use(index, k, b)?);
                cache_control(b, &mut ext);
            }
            (Some("tool_result"), Role::User) => sink(tool_result(index, k, b, calls)?)?,
            (Some("thinking" | "redacted_thinking"), Role::Assistant) => {
                parts.push(super::parts::anthropic_thinking(index, k, b)?);
            }
            (Some("image" | "document"), Role::User) => {
                parts.push(super::parts::anthropic_media(index, k, b)?);
                first_text.get_or_insert(k);
            }
            (Some(other @ ("tool_use" | "tool_result")), _)
            | (Some(other @ ("thinking" | "redacted_thinking" | "image" | "document")), _) => {
                return Err(bad(
                    index,
                    format!("a `{other}` block is not allowed in a {role} message"),
                ));
            }
            (Some(other), _) => {
                return Err(bad(
                    index,
                    format!("content block {k} of type `{other}` is not supported"),
                ));
            }
            (None, _) => return Err(bad(index, format!("content block {k} has no `type`"))),
        }
    }
    calls.made_all(
        index,
        parts.iter().filter_map(|p| match p {
            Part::ToolCall(c) => Some(&**c),
            _ => None,
        }),
    )?;
    if !parts.is_empty() || blocks.is_empty() {
        let mut message = Message::new(role, parts);
        message.extensions = ext;
        let block = if role == Role::User {
            first_text.filter(|k| *k > 0)
        } else {
            None
        };
        sink(msg(index, block, message))?;
    }
    Ok(())
}

/// A message's role: `user` or `assistant` (`system` belongs in the parameter).
fn message_role(index: usize, obj: &Map<String, Value>) -> Result<Role, ImportError> {
    match role_of(index, obj)? {
        "user" => Ok(Role::User),
        "assistant" => Ok(Role::Assistant),
        "system" => Err(bad(
            index,
            "role `system` is not allowed in messages (use the `system` parameter)",
        )),
        other => Err(bad(index, format!("unknown role `{other}`"))),
    }
}

/// A message's content as blocks (a string is one text block).
fn content_blocks(index: usize, obj: &Map<String, Value>) -> Result<Vec<Value>, ImportError> {
    match obj.get("content") {
        Some(Value::String(s)) => Ok(vec![serde_json::json!({"type": "text", "text": s})]),
        Some(Value::Array(a)) => Ok(a.clone()),
        Some(_) => Err(bad(
            index,
            "`content` must be a string or an array of blocks",
        )),
        None => Err(bad(index, "missing `content`")),
    }
}

/// A `tool_use` block (block `k`) as a tool call part.
fn tool_use(index: usize, k: usize, b: &Value) -> Result<Part, ImportError> {
    let Some(id) = nonempty_str(b.get("id")) else {
        return Err(bad(index, format!("tool_use block {k} has no `id` string")));
    };
    let Some(name) = nonempty_str(b.get("name")) else {
        return Err(bad(index, format!("tool_use `{id}` has no `name` string")));
    };
    let Some(input) = b.get("input") else {
        return Err(bad(index, format!("tool_use `{id}` has no `input`")));
    };
    let call = ToolCall::new(id, name, Arguments::Json(input.clone()));
    Ok(Part::ToolCall(Box::new(call)))
}

/// A `tool_result` block (block `k`) as a tool message answering its call.
fn tool_result(
    index: usize,
    k: usize,
    b: &Value,
    calls: &mut Calls,
) -> Result<TranscriptMessage, ImportError> {
    let id = match b.get("tool_use_id") {
        Some(Value::String(id)) => id.as_str(),
        _ => {
            return Err(bad(
                index,
                format!("tool_result block {k} has no `tool_use_id` string"),
            ));
        }
    };
    let is_error = match b.get("is_error") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(e)) => *e,
        Some(_) => return Err(bad(index, "`is_error` is not a boolean")),
    };
    let (content, media) = result_content(index, b.get("content"))?;
    let call = calls.answer(index, id)?;
    let mut result = vec![Part::ToolResult(ToolResult {
        call_id: id.to_owned(),
        content,
        is_error,
    })];
    result.extend(media);
    let mut message = Message::new(Role::Tool, result);
    cache_control(b, &mut message.extensions);
    let mut t = msg(index, Some(k), message);
    t.action = Some(call);
    t.is_result = true;
    Ok(t)
}
