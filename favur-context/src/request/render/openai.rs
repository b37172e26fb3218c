//! The neutral sequence as OpenAI Chat Completions messages.
//!
//! Chat Completions has no reasoning input: reasoning parts are not sent. Images in user
//! messages are `image_url` parts (base64 as a `data:` URL, or the URL), documents `file`
//! parts (base64 as `file_data`, or a `file_id`); media anywhere else, or in a form Chat
//! cannot carry (an image by file id, a document by URL), are sent as a text note saying
//! what was there ([`Media::describe`](crate::Media::describe)).

use serde_json::{Map, Value, json};

use super::neutral::{Out, Piece, object, tool_name};
use crate::model::entry::Entry;
use crate::model::message::Role;
use crate::model::parts::{Media, MediaSource};

/// The fields of an OpenAI message the library writes; extensions never replace them.
const OPENAI_OWNED: [&str; 4] = ["role", "content", "tool_calls", "tool_call_id"];

/// A pinned system entry as a `system` message.
pub(super) fn system_message(entry: &Entry, text: String) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), json!("system"));
    m.insert("content".into(), Value::String(text));
    super::add_extensions(&mut m, &entry.message().extensions, &OPENAI_OWNED);
    Value::Object(m)
}

/// A `data:` URL holding base64 `data` of `media_type`.
pub(super) fn data_url(media_type: &str, data: &str) -> String {
    format!("data:{media_type};base64,{data}")
}

/// A media piece as a Chat content part of a user message, if Chat carries it there.
fn media_part(media: &Media, document: bool) -> Option<Value> {
    match (&media.source, document) {
        (MediaSource::Base64 { data }, false) if media.media_type.starts_with("image/") => {
            let url = object([("url", Value::String(data_url(&media.media_type, data)))]);
            Some(object([
                ("type", Value::from("image_url")),
                ("image_url", url),
            ]))
        }
        (MediaSource::Url { url }, false) if is_http(url) => {
            Some(json!({"type": "image_url", "image_url": {"url": url}}))
        }
        (MediaSource::Base64 { data }, true) => {
            let mut file = Map::new();
            file.insert(
                "file_data".into(),
                Value::String(data_url(&media.media_type, data)),
            );
            if let Some(name) = &media.name {
                file.insert("filename".into(), json!(name));
            }
            Some(object([
                ("type", Value::from("file")),
                ("file", Value::Object(file)),
            ]))
        }
        (MediaSource::File { file_id }, true) => {
            Some(json!({"type": "file", "file": {"file_id": file_id}}))
        }
        _ => None,
    }
}

/// Whether a URL is one the OpenAI formats fetch (`http(s)`).
pub(super) fn is_http(url: &str) -> bool {
    url.starts_with("https://") || url.starts_with("http://")
}

/// The text note sent for a media piece a format cannot carry where it is; its name and
/// URL are data, [`neutralize_quoted`](crate::render::neutralize_quoted).
pub(super) fn media_note(piece: &Piece<'_>) -> Option<String> {
    let note = match piece {
        Piece::Image(m) => m.describe("image"),
        Piece::Document(m) => m.describe("document"),
        _ => return None,
    };
    Some(crate::request::forms::neutralize_quoted(&note).into_owned())
}

/// The content parts of a message of `role` (reasoning left out, media as parts in a
/// user message, as notes elsewhere).
fn content_parts(pieces: &[Piece<'_>], role: Role) -> Vec<Value> {
    let mut parts = Vec::new();
    for piece in pieces {
        let part = match piece {
            Piece::Text(t) => json!({"type": "text", "text": t.as_ref()}),
            Piece::Image(m) | Piece::Document(m) => {
                let document = matches!(piece, Piece::Document(_));
                match role {
                    Role::User => media_part(m, document),
                    _ => None,
                }
                .unwrap_or_else(|| json!({"type": "text", "text": media_note(piece)}))
            }
            Piece::Call(_) | Piece::Reasoning(_) => continue,
        };
        parts.push(part);
    }
    parts
}

fn content(pieces: &[Piece<'_>], role: Role, null_if_empty: bool) -> Value {
    // One text and nothing else sent (calls and reasoning are sent elsewhere or not at
    // all): the text itself, as the parts below would give.
    let mut sent = pieces
        .iter()
        .filter(|p| !matches!(p, Piece::Call(_) | Piece::Reasoning(_)));
    if let (Some(Piece::Text(t)), None) = (sent.next(), sent.next()) {
        return Value::String(t.as_ref().to_owned());
    }
    let mut parts = content_parts(pieces, role);
    let all_text = parts.iter().all(|p| p["type"] == "text");
    match parts.len() {
        0 if null_if_empty => Value::Null,
        0 => Value::String(String::new()),
        1 if all_text => parts.swap_remove(0)["text"].take(),
        _ => Value::Array(parts),
    }
}

/// One message of the neutral sequence as an OpenAI message.
pub(super) fn message(out: Out<'_>) -> Value {
    let mut m = Map::new();
    match out {
        Out::Msg(msg) => {
            m.insert("role".into(), json!(msg.role.as_str()));
            // An assistant message with calls may have no content.
            let null_if_empty = msg.role == Role::Assistant && !msg.calls.is_empty();
            m.insert(
                "content".into(),
                content(&msg.pieces, msg.role, null_if_empty),
            );
            if !msg.calls.is_empty() {
                let calls: Vec<Value> = msg
                    .calls
                    .into_iter()
                    .map(|c| {
                        let function = object([
                            ("name", Value::from(tool_name(&c.call.name))),
                            (
                                "arguments",
                                Value::String(c.call.arguments.to_json_string()),
                            ),
                        ]);
                        object([
                            ("id", Value::String(c.id)),
                            ("type", Value::from("function")),
                            ("function", function),
                        ])
                    })
                    .collect();
                m.insert("tool_calls".into(), Value::Array(calls));
            }
            super::add_extensions(&mut m, msg.ext, &OPENAI_OWNED);
        }
        Out::Res {
            id,
            content,
            media,
            ext,
            ..
        } => {
            m.insert("role".into(), json!("tool"));
            m.insert("tool_call_id".into(), Value::String(id));
            // A tool message carries text only: what the tool returned besides is noted.
            let mut content = content.into_owned();
            for note in media.iter().filter_map(media_note) {
                content.push('\n');
                content.push_str(&note);
            }
            m.insert("content".into(), Value::String(content));
            super::add_extensions(&mut m, ext, &OPENAI_OWNED);
        }
    }
    Value::Object(m)
}
