//! Reading the messages of a transcript file.

use favur_context::{Message, Part, Role, ToolCall};
use serde_json::Value;

/// The messages of a transcript value: an object with a `messages` array or a bare array.
/// OpenAI-style `tool_calls`/`tool_call_id` become tool calls and results; in the
/// mini-swe-agent plain chat format (`format` = `mini-swe-agent-1`), the fenced bash block
/// of an assistant message becomes a `bash` tool call and the next `user` observation
/// (`<returncode>...`) its result. `exit` messages (the submitted patch, never sent to
/// the model) are skipped.
pub(crate) fn messages_of(value: &Value) -> Result<Vec<Message>, String> {
    let (items, plain) = match value {
        Value::Array(items) => (items, false),
        Value::Object(map) => match map.get("messages") {
            Some(Value::Array(items)) => {
                let plain = map.get("format").and_then(Value::as_str) == Some("mini-swe-agent-1");
                (items, plain)
            }
            _ => return Err("no `messages` array".to_owned()),
        },
        _ => return Err("expected an object with `messages` or an array".to_owned()),
    };
    let mut out = Vec::with_capacity(items.len());
    let mut open_call: Option<String> = None;
    for (i, item) in items.iter().enumerate() {
        let role = item
            .get("role")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("message {i}: missing `role`"))?;
        let content = match item.get("content") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => content_text(other),
        };
        let message = match role {
            "exit" => continue,
            "system" | "developer" => Message::system(content),
            "user" => {
                if plain && content.starts_with("<returncode>") {
                    if let Some(id) = open_call.take() {
                        Message::tool_result(id, content, false)
                    } else {
                        Message::user(content)
                    }
                } else {
                    Message::user(content)
                }
            }
            "assistant" => {
                let mut parts = Vec::new();
                if !content.is_empty() {
                    parts.push(Part::Text(content.clone()));
                }
                if let Some(Value::Array(calls)) = item.get("tool_calls") {
                    for (j, call) in calls.iter().enumerate() {
                        let id = call
                            .get("id")
                            .and_then(Value::as_str)
                            .ok_or_else(|| format!("message {i}: tool call {j} has no `id`"))?;
                        let function = call.get("function").unwrap_or(call);
                        let name = function
                            .get("name")
                            .and_then(Value::as_str)
                            .ok_or_else(|| format!("message {i}: tool call {j} has no `name`"))?;
                        let arguments = match function.get("arguments") {
                            Some(Value::String(s)) => s.clone(),
                            _ => {
                                return Err(format!(
                                    "message {i}: tool call {j}: arguments are not a string"
                                ));
                            }
                        };
                        parts.push(Part::ToolCall(ToolCall::new(id, name, arguments)));
                    }
                } else if plain && let Some(command) = bash_block(&content) {
                    let id = format!("bash-{i}");
                    parts.push(Part::ToolCall(ToolCall::new(
                        id.clone(),
                        "bash",
                        serde_json::json!({ "command": command }),
                    )));
                    open_call = Some(id);
                }
                Message::new(Role::Assistant, parts)
            }
            "tool" => {
                let id = item
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("message {i}: tool message without `tool_call_id`"))?;
                Message::tool_result(id, content, false)
            }
            other => return Err(format!("message {i}: unknown role `{other}`")),
        };
        out.push(message);
    }
    Ok(out)
}

fn content_text(v: &Value) -> String {
    match v {
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

/// The body of the first fenced ```bash block.
fn bash_block(text: &str) -> Option<String> {
    let start = text.find("```bash")?;
    let rest = text.get(start + 7..)?;
    let rest = rest.strip_prefix('\n').unwrap_or(rest);
    let end = rest.find("```")?;
    Some(rest.get(..end)?.trim_end().to_owned())
}
