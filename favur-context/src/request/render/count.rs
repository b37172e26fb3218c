//! Counting a rendered request, by the rule usage follows.

use serde_json::{Map, Value};

use crate::model::message::{Arguments, Part, Role, ToolCall, ToolResult};
use crate::sent;
use crate::tokens::counter::TokenCounter;

/// Tokens a rendered request carries, counted from the request itself: an OpenAI
/// `messages` array (from [`render_openai`](super::render_openai)), an Anthropic request (from
/// [`render_anthropic`](super::render_anthropic), as [`AnthropicRequest::to_value`](super::AnthropicRequest::to_value))
/// or a Responses body (from [`render_responses`](super::render_responses)).
///
/// Reasoning and media count as usage counts them (a reasoning part its visible text, a
/// medium its [`Media::estimated_tokens`](crate::message::Media::estimated_tokens)), so the two agree where a format sends
/// them as they are: Anthropic and Responses with their own provider's reasoning. Where a
/// format sends a note instead of a medium, or leaves out reasoning (Chat Completions
/// always; the others for another provider's reasoning), the request counts what it
/// sends and usage stays the larger estimate.
///
/// Every content block (a system text, a text, a tool call, a tool result; blank texts
/// are not counted, and Anthropic does not send them) is counted on its own with `counter` (as a one-part [`Message`](crate::Message) of the role it is sent with) plus
/// `framing` tokens. This is the rule [`History::usage_tokens`](crate::History::usage_tokens) follows, so for a history
/// rendered with its own counter and framing the two agree, in both formats and after
/// any compaction. (Anthropic wraps non-object tool arguments as `{"arguments": ...}`;
/// such a call is counted as sent, with the wrapper.)
///
/// ```
/// use favur_context::{fuzzy, strict, History};
/// use favur_context::render::{render_anthropic, render_openai, request_tokens};
/// let mut h = History::new();
/// h.pin(strict!(system: "Be brief."));
/// h.append(strict!(user: "List the files."));
/// h.append(fuzzy!(tool_call: "c1", "bash", serde_json::json!({"command": "ls"})));
/// h.append(fuzzy!(tool_result("c1"): "Cargo.toml\nsrc"));
/// let (counter, framing) = (h.counter(), h.framing_tokens());
/// assert_eq!(request_tokens(&render_openai(&h), counter, framing), h.usage_tokens());
/// assert_eq!(request_tokens(&render_anthropic(&h).to_value(), counter, framing), h.usage_tokens());
/// ```
pub fn request_tokens(request: &Value, counter: &dyn TokenCounter, framing: u32) -> u64 {
    let mut blocks: Vec<(Role, Part)> = Vec::new();
    match request {
        Value::Array(messages) => openai_blocks(messages, &mut blocks),
        Value::Object(request) if request.contains_key("input") => {
            let input = request["input"].as_array().map_or(&[][..], Vec::as_slice);
            super::count_parts::responses(input, &mut blocks);
        }
        Value::Object(request) => anthropic_blocks(request, &mut blocks),
        _ => {}
    }
    blocks
        .into_iter()
        .filter(|(_, part)| !sent::is_blank(part))
        .map(|(role, part)| u64::from(sent::count_block(counter, role, part)) + u64::from(framing))
        .sum()
}

/// A JSON string's text, or empty.
fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

/// The blocks of an OpenAI `messages` array: texts and parts, tool calls, tool results.
fn openai_blocks(messages: &[Value], blocks: &mut Vec<(Role, Part)>) {
    for m in messages {
        let role = match m["role"].as_str() {
            Some("system") => Role::System,
            Some("assistant") => Role::Assistant,
            Some("tool") => {
                blocks.push((
                    Role::Tool,
                    Part::ToolResult(ToolResult {
                        call_id: text(&m["tool_call_id"]),
                        content: text(&m["content"]),
                        is_error: false,
                    }),
                ));
                continue;
            }
            _ => Role::User,
        };
        match &m["content"] {
            Value::String(t) => blocks.push((role, Part::Text(t.clone()))),
            Value::Array(parts) => {
                for p in parts {
                    blocks.push((role, super::count_parts::content_part(p)));
                }
            }
            _ => {}
        }
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            let f = &c["function"];
            blocks.push((
                Role::Assistant,
                Part::ToolCall(Box::new(ToolCall {
                    id: text(&c["id"]),
                    name: text(&f["name"]),
                    arguments: Arguments::parse(text(&f["arguments"])),
                    provider_id: None,
                })),
            ));
        }
    }
}

/// The blocks of an Anthropic request: its system blocks, then every content block of
/// its messages.
fn anthropic_blocks(request: &Map<String, Value>, blocks: &mut Vec<(Role, Part)>) {
    for b in request
        .get("system")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        blocks.push((Role::System, Part::Text(text(&b["text"]))));
    }
    for m in request
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let role = if m["role"] == "assistant" {
            Role::Assistant
        } else {
            Role::User
        };
        for b in m["content"].as_array().into_iter().flatten() {
            match b["type"].as_str() {
                Some("tool_use") => blocks.push((
                    Role::Assistant,
                    Part::ToolCall(Box::new(ToolCall {
                        id: text(&b["id"]),
                        name: text(&b["name"]),
                        arguments: Arguments::Json(b["input"].clone()),
                        provider_id: None,
                    })),
                )),
                Some("tool_result") => super::count_parts::result_blocks(
                    text(&b["tool_use_id"]),
                    &b["content"],
                    b["is_error"] == true,
                    blocks,
                ),
                _ => match super::count_parts::anthropic_block(b) {
                    Some(part) => blocks.push((role, part)),
                    None => blocks.push((role, Part::Text(text(&b["text"])))),
                },
            }
        }
    }
}
