//! OpenAI Chat Completions messages.

use std::borrow::Borrow;

use serde_json::{Map, Value};

use super::{
    Calls, ImportError, ParseOptions, Sink, arguments, bad, msg, nonempty_str, object, role_of,
    text_content,
};
use crate::model::message::{Message, Part, Role, ToolCall, ToolResult};

/// Fields other than `owned`, kept as the message's extensions.
pub(super) fn extensions(obj: &Map<String, Value>, owned: &[&str]) -> Map<String, Value> {
    obj.iter()
        .filter(|(k, _)| !owned.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// An OpenAI-style `tool` message (`tool_call_id`, `content`) as a tool-result message,
/// and the call it answers. Shared by the OpenAI and mini-swe-agent tool-calling formats.
pub(super) fn tool_message(
    index: usize,
    obj: &Map<String, Value>,
    content: Option<&Value>,
    calls: &mut Calls,
) -> Result<(Message, ToolCall), ImportError> {
    let id = match obj.get("tool_call_id") {
        Some(Value::String(id)) => id.as_str(),
        Some(_) => return Err(bad(index, "`tool_call_id` is not a string")),
        None => return Err(bad(index, "missing `tool_call_id`")),
    };
    let text: Vec<String> = text_content(index, content)?
        .into_iter()
        .filter_map(|p| p.text().map(str::to_owned))
        .collect();
    let call = calls.answer(index, id)?;
    let message = Message::new(
        Role::Tool,
        vec![Part::ToolResult(ToolResult {
            call_id: id.to_owned(),
            content: text.join("\n"),
            is_error: false,
        })],
    );
    Ok((message, call))
}

/// The calls of an assistant message, in OpenAI's nested form
/// (`{"id", "type": "function", "function": {"name", "arguments"}}`) or mini-swe-agent's
/// flat form (`{"id", "name", "arguments"}`).
pub(super) fn tool_calls(
    index: usize,
    raw: Option<&Value>,
    options: ParseOptions,
) -> Result<Vec<ToolCall>, ImportError> {
    let list = match raw {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(bad(index, "`tool_calls` is not an array")),
    };
    let mut out = Vec::with_capacity(list.len());
    for (k, call) in list.iter().enumerate() {
        let Some(call) = call.as_object() else {
            return Err(bad(index, format!("tool call {k} is not an object")));
        };
        let Some(id) = nonempty_str(call.get("id")) else {
            return Err(bad(index, format!("tool call {k} has no `id` string")));
        };
        let f = match call.get("function") {
            Some(Value::Object(f)) => f,
            Some(_) => {
                return Err(bad(
                    index,
                    format!("tool call `{id}`: `function` is not an object"),
                ));
            }
            None => call,
        };
        let Some(name) = nonempty_str(f.get("name")) else {
            return Err(bad(index, format!("tool call `{id}` has no `name` string")));
        };
        let args = arguments(index, id, f.get("arguments"), options)?;
        out.push(ToolCall::new(id, name, args));
    }
    Ok(out)
}

/// Reads the messages one by one, handing each to `sink` (OpenAI has no exit record).
pub(super) fn parse_each<M: Borrow<Value>>(
    list: impl Iterator<Item = Result<M, ImportError>>,
    options: ParseOptions,
    sink: &mut Sink<'_>,
) -> Result<Option<String>, ImportError> {
    let mut calls = Calls::default();
    let mut leading = true;
    for (index, m) in list.enumerate() {
        let m = m?;
        let obj = object(index, m.borrow())?;
        let role = role_of(index, obj)?;
        let content = obj.get("content");
        let mut out = msg(index, None, Message::new(Role::User, Vec::new()));
        match role {
            "system" | "developer" | "user" => {
                if content.is_none() {
                    return Err(bad(index, "missing `content`"));
                }
                let r = if role == "user" {
                    Role::User
                } else {
                    Role::System
                };
                out.message = Message::new(r, text_content(index, content)?);
                out.message.extensions = extensions(obj, &["role", "content"]);
                out.pin = leading && r == Role::System;
            }
            "assistant" => {
                let made = tool_calls(index, obj.get("tool_calls"), options)?;
                let mut parts = text_content(index, content)?;
                calls.made_all(index, &made)?;
                parts.extend(made.into_iter().map(Part::from));
                out.message = Message::new(Role::Assistant, parts);
                out.message.extensions = extensions(obj, &["role", "content", "tool_calls"]);
            }
            "tool" => {
                if content.is_none() {
                    return Err(bad(index, "missing `content`"));
                }
                let (message, call) = tool_message(index, obj, content, &mut calls)?;
                out.message = message;
                out.message.extensions = extensions(obj, &["role", "content", "tool_call_id"]);
                out.action = Some(call);
                out.is_result = true;
            }
            other => return Err(bad(index, format!("unknown role `{other}`"))),
        }
        leading &= out.pin;
        sink(out)?;
    }
    Ok(None)
}
