//! The Anthropic rules for thinking, redacted thinking, image and document blocks.
//!
//! A `thinking` block (with a non-empty `thinking`-string and `signature`) or a
//! `redacted_thinking` block (with a non-empty `data`) is allowed in an assistant turn
//! only, before any `text` or `tool_use` block of that turn. An `image` block has a
//! `source` of type `base64` (a `media_type` in [`IMAGE_MEDIA_TYPES`] and non-empty
//! `data`), `url` (a non-empty `url`) or `file` (a non-empty `file_id`); a `document`
//! block likewise, a `base64` source being `application/pdf`. Both are allowed in user
//! turns and inside `tool_result` content.

use serde_json::Value;

use super::Rule;

/// The image media types Anthropic accepts.
pub const IMAGE_MEDIA_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// The media types of a base64 document Anthropic accepts.
pub const DOCUMENT_MEDIA_TYPES: [&str; 1] = ["application/pdf"];

fn non_empty<'a>(b: &'a Value, key: &str) -> Option<&'a str> {
    b.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn not_allowed(kind: &str, role: &str) -> Rule {
    Rule::BlockNotAllowed {
        block: kind.to_owned(),
        role: role.to_owned(),
    }
}

/// Checks block `b` of type `kind` in a `role` turn; `after_content` says whether a text
/// or tool_use block came before it in the turn. Other block types pass.
pub(super) fn check(kind: &str, b: &Value, role: &str, after_content: bool) -> Result<(), Rule> {
    match kind {
        "thinking" | "redacted_thinking" => {
            if role != "assistant" {
                return Err(not_allowed(kind, role));
            }
            if after_content {
                return Err(Rule::ThinkingNotFirst);
            }
            if kind == "thinking" {
                if !b.get("thinking").is_some_and(Value::is_string) {
                    return Err(Rule::BadContent(
                        "a thinking block needs a `thinking` string".into(),
                    ));
                }
                if non_empty(b, "signature").is_none() {
                    return Err(Rule::MissingSignature);
                }
            } else if non_empty(b, "data").is_none() {
                return Err(Rule::BadContent(
                    "a redacted_thinking block needs non-empty `data`".into(),
                ));
            }
            Ok(())
        }
        "image" | "document" if role != "user" => Err(not_allowed(kind, role)),
        "image" | "document" => media(kind, b),
        _ => Ok(()),
    }
}

/// Checks an `image` or `document` block's source.
fn media(kind: &str, b: &Value) -> Result<(), Rule> {
    let Some(source) = b.get("source").filter(|s| s.is_object()) else {
        return Err(Rule::BadSource(format!(
            "a {kind} block needs a `source` object"
        )));
    };
    let bad = |why: &str| Err(Rule::BadSource(format!("{kind} source: {why}")));
    match source.get("type").and_then(Value::as_str) {
        Some("base64") => {
            let allowed: &[&str] = if kind == "image" {
                &IMAGE_MEDIA_TYPES
            } else {
                &DOCUMENT_MEDIA_TYPES
            };
            let media_type = source.get("media_type").and_then(Value::as_str);
            match media_type {
                Some(t) if allowed.contains(&t) => {}
                other => {
                    return Err(Rule::BadMediaType {
                        media_type: other.unwrap_or_default().to_owned(),
                    });
                }
            }
            if non_empty(source, "data").is_none() {
                return bad("`base64` needs non-empty `data`");
            }
            Ok(())
        }
        Some("url") if non_empty(source, "url").is_some() => Ok(()),
        Some("url") => bad("`url` needs a non-empty `url`"),
        Some("file") if non_empty(source, "file_id").is_some() => Ok(()),
        Some("file") => bad("`file` needs a non-empty `file_id`"),
        Some(other) => bad(&format!("unknown type `{other}`")),
        None => bad("needs a `type`"),
    }
}

/// Checks the blocks of a `tool_result`'s content array: text, image and document blocks.
pub(super) fn check_result_content(blocks: &[Value]) -> Result<(), Rule> {
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("text") if b.get("text").is_some_and(Value::is_string) => {}
            Some(kind @ ("image" | "document")) => media(kind, b)?,
            Some(kind) => return Err(not_allowed(kind, "tool_result")),
            None => {
                return Err(Rule::BadContent(
                    "a tool_result content block needs a `type` and its fields".into(),
                ));
            }
        }
    }
    Ok(())
}
