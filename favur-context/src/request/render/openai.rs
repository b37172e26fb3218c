//! The neutral sequence as OpenAI Chat Completions messages.
//!
//! Chat Completions has no reasoning input: reasoning parts are not sent. Images in user
//! messages are `image_url` parts (base64 as a `data:` URL, or the URL), documents `file`
//! parts (base64 as `file_data`, or a `file_id`); media anywhere else, or in a form Chat
//! cannot carry (an image by file id, a document by URL, a base64 image of a type outside
//! [`OPENAI_IMAGE_MEDIA_TYPES`]), are sent as a text note saying what was there
//! ([`Media::describe`](crate::message::Media::describe)).

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use super::neutral::{Out, Piece, SPARE, SPARE_TEXT, object, refill, tool_name};
use crate::model::entry::Entry;
use crate::model::message::Role;
use crate::model::parts::{Media, MediaSource};
use crate::request::validate::OPENAI_IMAGE_MEDIA_TYPES;

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
        (MediaSource::Base64 { data }, false) if openai_image(&media.media_type) => {
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

/// Whether the OpenAI formats take a base64 image of `media_type`
/// ([`OPENAI_IMAGE_MEDIA_TYPES`]); another one is sent as a note.
pub(super) fn openai_image(media_type: &str) -> bool {
    OPENAI_IMAGE_MEDIA_TYPES.contains(&media_type)
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
    Some(crate::sent::neutralize_quoted(&note).into_owned())
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

/// Messages a renderer took off, emptied, to build the next ones in: a `{"role",
/// "content"}` message with text content, or a tool message with text only, keeps its
/// map, keys, role and text buffer, so a request rendered after a compaction allocates
/// (and frees) little. At most [`SPARE`] of each are kept, with text buffers of at most
/// [`SPARE_TEXT`] bytes.
#[derive(Debug, Default)]
pub(super) struct Spare {
    /// `{"role", "content"}` maps, `content` an empty string.
    messages: Vec<Map<String, Value>>,
    /// `{"role": "tool", "tool_call_id", "content"}` maps, `content` an empty string.
    results: Vec<Map<String, Value>>,
}

impl Spare {
    /// Keeps `message` if it is a plain text message or a tool message, of a size worth
    /// keeping.
    pub(super) fn retire(&mut self, message: Value) {
        let Value::Object(mut map) = message else {
            return;
        };
        let kept = match map.get("role") {
            Some(Value::String(_)) if map.len() == 2 => &mut self.messages,
            Some(Value::String(r))
                if r == "tool"
                    && map.len() == 3
                    && matches!(map.get("tool_call_id"), Some(Value::String(_))) =>
            {
                &mut self.results
            }
            _ => return,
        };
        if kept.len() >= SPARE {
            return;
        }
        if let Some(Value::String(text)) = map.get_mut("content")
            && text.capacity() <= SPARE_TEXT
        {
            text.clear();
            kept.push(map);
        }
    }

    /// One message of the neutral sequence as an OpenAI message ([`message`]), a plain
    /// text message or a text-only tool message built in a kept one if there is one.
    pub(super) fn message(&mut self, out: Out<'_>) -> Value {
        let mut msg = match out {
            Out::Msg(msg) => msg,
            Out::Res {
                id,
                content,
                is_error,
                media,
                ext,
            } if media.is_empty() && sends_no_field(ext) => {
                // What `message` makes a result with text only, in a kept one.
                let Some(mut map) = self.results.pop() else {
                    return message(Out::Res {
                        id,
                        content,
                        is_error,
                        media,
                        ext,
                    });
                };
                if let Some(Value::String(buffer)) = map.get_mut("tool_call_id") {
                    *buffer = id;
                }
                if let Some(Value::String(buffer)) = map.get_mut("content") {
                    refill(buffer, content);
                }
                return Value::Object(map);
            }
            result => return message(result),
        };
        // What `message` makes a single text with no calls and no extension sent.
        let mut sent = msg
            .pieces
            .iter()
            .filter(|p| !matches!(p, Piece::Call(_) | Piece::Reasoning(_)));
        let single = matches!((sent.next(), sent.next()), (Some(Piece::Text(_)), None));
        let plain = single && msg.calls.is_empty() && sends_no_field(msg.ext);
        let spare = if plain { self.messages.pop() } else { None };
        let Some(mut map) = spare else {
            return message(Out::Msg(msg));
        };
        let role = msg.role.as_str();
        if let Some(Value::String(r)) = map.get_mut("role") {
            refill(r, Cow::Borrowed(role));
        }
        let text = msg.pieces.drain(..).find_map(|p| match p {
            Piece::Text(t) => Some(t),
            _ => None,
        });
        if let (Some(Value::String(buffer)), Some(text)) = (map.get_mut("content"), text) {
            refill(buffer, text);
        }
        Value::Object(map)
    }
}

/// Whether none of `ext` is sent as a field of a message (each is one the library
/// writes or keeps for itself).
fn sends_no_field(ext: &Map<String, Value>) -> bool {
    ext.keys().all(|k| {
        OPENAI_OWNED.contains(&k.as_str()) || k.starts_with(super::INTERNAL_EXTENSION_PREFIX)
    })
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

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use serde_json::{Map, Value, json};

    use super::{SPARE_TEXT, Spare, message};
    use crate::model::message::Role;
    use crate::request::render::neutral::{Msg, Out, Piece, empty_map};

    fn text<'a>(role: Role, t: Cow<'a, str>, ext: &'a Map<String, Value>) -> Out<'a> {
        Out::Msg(Msg {
            role,
            pieces: vec![Piece::Text(t)],
            calls: Vec::new(),
            ext,
        })
    }

    #[test]
    fn a_kept_message_is_built_again_as_a_new_one_is() {
        let mut spare = Spare::default();
        spare.retire(json!({"role": "assistant", "content": "an old, longer text"}));
        assert_eq!(spare.messages.len(), 1);
        let built = spare.message(text(Role::User, Cow::Borrowed("new"), empty_map()));
        assert_eq!(built, json!({"role": "user", "content": "new"}));
        assert!(spare.messages.is_empty());
        // Owned text is moved in; with nothing kept, the message is made afresh.
        spare.retire(built);
        let owned = spare.message(text(Role::User, Cow::Owned("x".into()), empty_map()));
        assert_eq!(
            owned,
            message(text(Role::User, Cow::Borrowed("x"), empty_map()))
        );
        let fresh = spare.message(text(Role::Assistant, Cow::Borrowed("y"), empty_map()));
        assert_eq!(fresh, json!({"role": "assistant", "content": "y"}));
    }

    #[test]
    fn only_plain_messages_of_a_kept_size_are_kept_or_built_in() {
        let mut spare = Spare::default();
        spare.retire(json!({"role": "user", "content": "x".repeat(SPARE_TEXT + 1)}));
        spare.retire(json!({"role": "user", "content": "a", "name": "ana"}));
        spare.retire(json!({"role": "tool", "content": [{"type": "text", "text": "a"}]}));
        spare.retire(json!("not a message"));
        assert!(spare.messages.is_empty());
        spare.retire(json!({"role": "user", "content": "kept"}));
        // An extension sent as a field is built by `message`, the kept one left.
        let ext = json!({"name": "ana"});
        let ext = ext.as_object().unwrap();
        let built = spare.message(text(Role::User, Cow::Borrowed("hi"), ext));
        assert_eq!(
            built,
            json!({"role": "user", "content": "hi", "name": "ana"})
        );
        assert_eq!(spare.messages.len(), 1);
    }

    fn result<'a>(id: &str, content: &'a str, ext: &'a Map<String, Value>) -> Out<'a> {
        Out::Res {
            id: id.into(),
            content: Cow::Borrowed(content),
            is_error: false,
            media: Vec::new(),
            ext,
        }
    }

    #[test]
    fn a_kept_tool_message_is_built_again_as_a_new_one_is() {
        let mut spare = Spare::default();
        spare.retire(json!({"role": "tool", "tool_call_id": "old", "content": "old output"}));
        spare.retire(json!({"role": "tool", "tool_call_id": "c2", "content": "a", "name": "x"}));
        assert_eq!(spare.results.len(), 1);
        let built = spare.message(result("c1", "ok", empty_map()));
        assert_eq!(built, message(result("c1", "ok", empty_map())));
        assert!(spare.results.is_empty());
        // An extension sent as a field is built by `message`, the kept one left.
        spare.retire(built);
        let ext = json!({"name": "x"});
        let ext = ext.as_object().unwrap();
        let named = spare.message(result("c3", "b", ext));
        assert_eq!(named, message(result("c3", "b", ext)));
        assert_eq!(named["name"], "x");
        assert_eq!(spare.results.len(), 1);
    }
}
