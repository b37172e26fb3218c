//! Counting the blocks of a rendered request that carry reasoning or media, and the
//! items of a Responses request, by the rule usage follows (see
//! [`request_tokens`](super::request_tokens)).

use serde_json::Value;

use crate::model::message::{Arguments, Part, Role, ToolCall, ToolResult};
use crate::model::parts::{Media, Provider, Reasoning};

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

/// Media read back from a rendered `data:` URL, URL or file id (what counting needs: the
/// kind and, for base64, the size).
fn media_of(url: Option<&str>) -> Media {
    match url {
        Some(u) if u.starts_with("data:") => {
            let data = u.split_once(";base64,").map_or("", |(_, d)| d);
            Media::base64("", data)
        }
        _ => Media::url("", url.unwrap_or_default()),
    }
}

/// An Anthropic media block (`image`, `document`) as the part usage counted.
fn anthropic_media(kind: &str, b: &Value) -> Option<Part> {
    let source = &b["source"];
    let media = match source["type"].as_str() {
        Some("base64") => Media::base64("", text(&source["data"])),
        _ => Media::url("", ""),
    };
    match kind {
        "image" => Some(Part::Image(Box::new(media))),
        "document" => Some(Part::Document(Box::new(media))),
        _ => None,
    }
}

/// An Anthropic block other than text, tool_use and tool_result, as the part usage
/// counted, if it is one of reasoning or media.
pub(super) fn anthropic_block(b: &Value) -> Option<Part> {
    match b["type"].as_str()? {
        "thinking" => Some(Part::Reasoning(Box::new(Reasoning {
            text: vec![text(&b["thinking"])],
            ..Reasoning::new(Provider::Anthropic)
        }))),
        "redacted_thinking" => Some(Part::Reasoning(Box::new(Reasoning::new(
            Provider::Anthropic,
        )))),
        kind => anthropic_media(kind, b),
    }
}

/// A tool result's content blocks (Anthropic `tool_result` content, Responses `output`
/// parts): its text as the result, and each media block on its own.
pub(super) fn result_blocks(
    call_id: String,
    content: &Value,
    is_error: bool,
    out: &mut Vec<(Role, Part)>,
) {
    let Value::Array(inner) = content else {
        out.push((Role::Tool, result(call_id, text(content), is_error)));
        return;
    };
    let body = inner
        .iter()
        .find(|b| matches!(b["type"].as_str(), Some("text" | "input_text")))
        .map_or(String::new(), |b| text(&b["text"]));
    out.push((Role::Tool, result(call_id, body, is_error)));
    for b in inner {
        let part = match b["type"].as_str() {
            Some(kind @ ("image" | "document")) => anthropic_media(kind, b),
            Some("input_image" | "input_file") => Some(content_part(b)),
            _ => None,
        };
        out.extend(part.map(|p| (Role::Tool, p)));
    }
}

fn result(call_id: String, content: String, is_error: bool) -> Part {
    Part::ToolResult(ToolResult {
        call_id,
        content,
        is_error,
    })
}

/// A content part of a Chat message or a Responses message item as the part usage
/// counted: media as media, anything else as its text.
pub(super) fn content_part(p: &Value) -> Part {
    match p["type"].as_str() {
        Some("input_image") => Part::Image(Box::new(media_of(p["image_url"].as_str()))),
        Some("image_url") => Part::Image(Box::new(media_of(p["image_url"]["url"].as_str()))),
        Some("input_file") => Part::Document(Box::new(media_of(p["file_data"].as_str()))),
        Some("file") => Part::Document(Box::new(media_of(p["file"]["file_data"].as_str()))),
        _ => Part::Text(text(&p["text"])),
    }
}

/// The blocks of Responses `input` items.
pub(super) fn responses(items: &[Value], out: &mut Vec<(Role, Part)>) {
    for item in items {
        match item["type"].as_str() {
            Some("function_call") => out.push((
                Role::Assistant,
                Part::ToolCall(Box::new(ToolCall::new(
                    text(&item["call_id"]),
                    text(&item["name"]),
                    Arguments::parse(text(&item["arguments"])),
                ))),
            )),
            Some("function_call_output") => {
                result_blocks(text(&item["call_id"]), &item["output"], false, out);
            }
            Some("reasoning") => {
                let summary = item["summary"].as_array().into_iter().flatten();
                out.push((
                    Role::Assistant,
                    Part::Reasoning(Box::new(Reasoning {
                        text: summary.map(|s| text(&s["text"])).collect(),
                        ..Reasoning::new(Provider::OpenAi)
                    })),
                ));
            }
            _ => {
                let role = match item["role"].as_str() {
                    Some("system" | "developer") => Role::System,
                    Some("assistant") => Role::Assistant,
                    _ => Role::User,
                };
                match &item["content"] {
                    Value::String(t) => out.push((role, Part::Text(t.clone()))),
                    content => {
                        for p in content.as_array().into_iter().flatten() {
                            out.push((role, content_part(p)));
                        }
                    }
                }
            }
        }
    }
}
