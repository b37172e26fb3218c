//! mini-swe-agent trajectories, plain chat and tool calling.

use std::borrow::Borrow;

use serde_json::{Value, json};

use super::openai::{tool_calls, tool_message};
use super::{Calls, ImportError, ParseOptions, Sink, bad, msg, object, role_of, text_content};
use crate::model::message::{Message, Part, Role, ToolCall};
use crate::sent::bash_blocks;

/// Reads the messages of a trajectory one by one, handing each to `sink`; returns the
/// exit record.
pub(super) fn parse_each<M: Borrow<Value>>(
    list: impl Iterator<Item = Result<M, ImportError>>,
    options: ParseOptions,
    sink: &mut Sink<'_>,
) -> Result<Option<String>, ImportError> {
    let mut calls = Calls::default();
    let mut exit = None;
    let mut leading = true;
    // The action of the previous message if it was an assistant message.
    let mut after_assistant: Option<Option<ToolCall>> = None;
    for (index, m) in list.enumerate() {
        let m = m?;
        let obj = object(index, m.borrow())?;
        let role = role_of(index, obj)?;
        if exit.is_some() {
            return Err(bad(index, "message after the `exit` record"));
        }
        let content = obj.get("content");
        let prompt_tokens = prompt_tokens(index, obj.get("prompt_tokens"))?;
        let mut out = msg(index, None, Message::new(Role::User, Vec::new()));
        out.prompt_tokens = prompt_tokens;
        let previous = after_assistant.take();
        match role {
            "system" => {
                out.message = Message::new(Role::System, text_content(index, content)?);
                out.pin = leading;
            }
            "user" => {
                out.message = Message::new(Role::User, text_content(index, content)?);
                if let Some(action) = previous {
                    out.is_result = true;
                    out.action = action;
                }
            }
            "assistant" => {
                let made = tool_calls(index, obj.get("tool_calls"), options)?;
                let mut parts = text_content(index, content)?;
                if made.is_empty() {
                    out.action = bash_action(&parts);
                }
                calls.made_all(index, &made)?;
                parts.extend(made.into_iter().map(Part::from));
                out.message = Message::new(Role::Assistant, parts);
                after_assistant = Some(out.action.clone());
            }
            "tool" => {
                let (message, call) = tool_message(index, obj, content, &mut calls)?;
                out.message = message;
                out.action = Some(call);
                out.is_result = true;
                // A later user message still answers the assistant's turn.
                after_assistant = previous;
            }
            "exit" => {
                let text: Vec<String> = text_content(index, content)?
                    .into_iter()
                    .filter_map(|p| p.text().map(str::to_owned))
                    .collect();
                exit = Some(text.join("\n"));
                continue;
            }
            other => return Err(bad(index, format!("unknown role `{other}`"))),
        }
        leading &= out.pin;
        sink(out)?;
    }
    Ok(exit)
}

/// A message's `prompt_tokens`, if any: a non-negative integer.
fn prompt_tokens(index: usize, v: Option<&Value>) -> Result<Option<u64>, ImportError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| bad(index, "`prompt_tokens` is not a non-negative integer")),
    }
}

/// The action of an assistant message without tool calls: its one bash block, as a
/// `bash` call (none if it has no block or several).
fn bash_action(parts: &[Part]) -> Option<ToolCall> {
    let text: Vec<&str> = parts.iter().filter_map(Part::text).collect();
    let text = text.join("\n");
    match bash_blocks(&text)[..] {
        [command] => Some(ToolCall::new("", "bash", json!({ "command": command }))),
        _ => None,
    }
}
