//! mini-swe-agent trajectories, plain chat and tool calling.

use std::borrow::Borrow;

use serde_json::{Value, json};

use super::openai::{tool_calls, tool_message};
use super::{Calls, ImportError, ParseOptions, Sink, bad, msg, object, role_of, text_content};
use crate::model::message::{Message, Part, Role, ToolCall};

/// The fenced bash blocks of an assistant text, as mini-swe-agent finds them
/// (```` ```bash\s*\n(.*?)\n``` ````), trimmed.
pub(crate) fn bash_blocks(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(p) = memchr::memmem::find(rest.as_bytes(), b"```bash") {
        let after = &rest[p + "```bash".len()..];
        let ws = after.len() - after.trim_start().len();
        let Some(nl) = after[..ws].rfind('\n') else {
            rest = after;
            continue;
        };
        let body = &after[nl + 1..];
        // The lazy `(.*?)\n```` may match an empty body right at the start.
        let (cmd, next) = if let Some(stripped) = body.strip_prefix("```") {
            ("", stripped)
        } else if let Some(end) = memchr::memmem::find(body.as_bytes(), b"\n```") {
            (&body[..end], &body[end + 4..])
        } else {
            break;
        };
        found.push(cmd.trim());
        rest = next;
    }
    found
}

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
        let prompt_tokens = match obj.get("prompt_tokens") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .ok_or_else(|| bad(index, "`prompt_tokens` is not a non-negative integer"))?,
            ),
        };
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
                let parts = text_content(index, content)?;
                if made.is_empty() {
                    let text: Vec<&str> = parts.iter().filter_map(Part::text).collect();
                    let blocks = bash_blocks(&text.join("\n"))
                        .into_iter()
                        .map(str::to_owned)
                        .collect::<Vec<_>>();
                    if let [command] = &blocks[..] {
                        out.action = Some(ToolCall::new("", "bash", json!({ "command": command })));
                    }
                }
                calls.made_all(index, &made)?;
                let mut parts = parts;
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

#[cfg(test)]
mod tests {
    use super::bash_blocks;

    #[test]
    fn finds_blocks_like_the_agent() {
        assert_eq!(
            bash_blocks("THOUGHT: x\n\n```bash\nls -la\n```"),
            vec!["ls -la"]
        );
        assert_eq!(
            bash_blocks("```bash\na\n```\n```bash\nb\n```"),
            vec!["a", "b"]
        );
        assert_eq!(bash_blocks("```bash ls```"), Vec::<&str>::new());
        assert_eq!(bash_blocks("```bash\nunterminated"), Vec::<&str>::new());
        assert_eq!(
            bash_blocks("```bash\ncat <<'EOF' > a\nx\nEOF\n```"),
            vec!["cat <<'EOF' > a\nx\nEOF"]
        );
    }
}
