//! The neutral sequence as OpenAI Responses `input` items.
//!
//! - Pinned system entries are `system` message items at the start of `input` (one per
//!   pin, as Chat sends them), not `instructions`: `instructions` are not carried from
//!   one response to the next, the input is.
//! - A user (or tool-entry) message is a `message` item with `input_text`,
//!   `input_image` and `input_file` parts (a base64 image of a type outside
//!   [`OPENAI_IMAGE_MEDIA_TYPES`](crate::render::validate::OPENAI_IMAGE_MEDIA_TYPES) is a note).
//! - An assistant message is its items in its own order: OpenAI reasoning as `reasoning`
//!   items (`id`, `summary`, `encrypted_content`; reasoning from another provider, or
//!   without an id, is not sent), texts with an item id (the ids recorded in the
//!   `favur_item_ids` extension, in order) as output `message` items (`id`, `status`,
//!   `output_text` parts with `annotations`), texts without one as easy input messages
//!   (`{"type":"message","role":"assistant","content":"..."}`, one per text), calls as
//!   `function_call` items (`call_id`, `name`, `arguments` as a JSON string, the call's
//!   `provider_id` as `id`). Media of an assistant message are text notes.
//! - A result is a `function_call_output` item: `output` its text, or with media it
//!   returned an array of `input_text`, `input_image` and `input_file` parts.
//!
//! Call ids are made unique across the request (Responses pairs by `call_id` alone).

use foldhash::HashMap;

use serde_json::{Map, Value, json};

use super::neutral::{Out, OutCall, Piece, UniqueIds, object, tool_name};
use super::openai::{data_url, media_note};
use crate::model::entry::Entry;
use crate::model::extensions::ITEM_IDS_EXTENSION;
use crate::model::message::Role;
use crate::model::parts::{Media, MediaSource, Provider, Reasoning};

/// A pinned system entry as a `system` message item.
pub(super) fn system_message(_entry: &Entry, text: String) -> Value {
    message_item(
        "system",
        vec![object([
            ("type", Value::from("input_text")),
            ("text", Value::String(text)),
        ])],
        None,
    )
}

fn message_item(role: &str, content: Vec<Value>, id: Option<&Value>) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), json!("message"));
    if let Some(id) = id {
        m.insert("id".into(), id.clone());
    }
    m.insert("role".into(), json!(role));
    m.insert("content".into(), Value::Array(content));
    Value::Object(m)
}

/// A run of assistant texts as input items, in a form the SDK's input item types accept
/// (openai-python `ResponseInputItemParam`):
///
/// - with the item id the API gave it (`id`): the output message it was
///   (`ResponseOutputMessageParam`): `status` and each `output_text` part's `annotations`
///   are required there, and the id keeps it paired with the reasoning item before it;
/// - without one: an easy input message per text (`EasyInputMessageParam`, role
///   `assistant`) whose `content` is the text as a string. Not a content list: the SDK
///   types a list as input parts (`input_text`), which the API refuses in an assistant
///   message ("supported values are `output_text` and `refusal`"), and `output_text`
///   parts belong to the output message form, which needs the id. One item per text, so
///   each text stays one counted block, as usage counts it.
fn assistant_texts(texts: Vec<String>, id: Option<&Value>, input: &mut Vec<Value>) {
    if let Some(id) = id {
        let content = texts
            .into_iter()
            .map(|t| json!({"type": "output_text", "text": t, "annotations": []}))
            .collect();
        let mut item = message_item("assistant", content, Some(id));
        if let Value::Object(m) = &mut item {
            m.insert("status".into(), json!("completed"));
        }
        input.push(item);
        return;
    }
    input.extend(texts.into_iter().map(|t| {
        object([
            ("type", Value::from("message")),
            ("role", Value::from("assistant")),
            ("content", Value::String(t)),
        ])
    }));
}

/// A media piece as an input content part, if Responses carries it there.
fn input_media(piece: &Piece<'_>) -> Option<Value> {
    let (media, image): (&Media, bool) = match piece {
        Piece::Image(m) => (m, true),
        Piece::Document(m) => (m, false),
        _ => return None,
    };
    let mut part = Map::new();
    match (&media.source, image) {
        (MediaSource::Base64 { data }, true) if super::openai::openai_image(&media.media_type) => {
            part.insert("type".into(), json!("input_image"));
            part.insert(
                "image_url".into(),
                Value::String(data_url(&media.media_type, data)),
            );
        }
        (MediaSource::Url { url }, true) if super::openai::is_http(url) => {
            part.insert("type".into(), json!("input_image"));
            part.insert("image_url".into(), json!(url));
        }
        (MediaSource::File { file_id }, true) => {
            part.insert("type".into(), json!("input_image"));
            part.insert("file_id".into(), json!(file_id));
        }
        (MediaSource::Base64 { data }, false) => {
            part.insert("type".into(), json!("input_file"));
            part.insert(
                "file_data".into(),
                Value::String(data_url(&media.media_type, data)),
            );
        }
        (MediaSource::Url { url }, false) => {
            part.insert("type".into(), json!("input_file"));
            part.insert("file_url".into(), json!(url));
        }
        (MediaSource::File { file_id }, false) => {
            part.insert("type".into(), json!("input_file"));
            part.insert("file_id".into(), json!(file_id));
        }
        _ => return None,
    }
    if image {
        part.insert("detail".into(), json!("auto"));
    } else if let Some(name) = &media.name {
        part.insert("filename".into(), json!(name));
    }
    Some(Value::Object(part))
}

/// A piece of a non-assistant message as an input content part (reasoning is not sent
/// there; media that cannot go there are notes).
fn input_part(piece: &Piece<'_>) -> Option<Value> {
    match piece {
        Piece::Text(t) => Some(json!({"type": "input_text", "text": t.as_ref()})),
        Piece::Image(_) | Piece::Document(_) => input_media(piece)
            .or_else(|| media_note(piece).map(|note| json!({"type": "input_text", "text": note}))),
        Piece::Call(_) | Piece::Reasoning(_) => None,
    }
}

/// A reasoning item, if the reasoning is OpenAI's and has an id.
fn reasoning_item(r: &Reasoning) -> Option<Value> {
    let id = r.id.as_ref().filter(|_| r.provider == Provider::OpenAi)?;
    let mut item = Map::new();
    item.insert("type".into(), json!("reasoning"));
    item.insert("id".into(), json!(id));
    let summary: Vec<Value> = r
        .text
        .iter()
        .map(|t| json!({"type": "summary_text", "text": t}))
        .collect();
    item.insert("summary".into(), Value::Array(summary));
    if let Some(enc) = &r.encrypted {
        item.insert("encrypted_content".into(), json!(enc));
    }
    Some(Value::Object(item))
}

/// Where [`Items`] stood at some point, to go back to it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct ItemsMark {
    items: usize,
    ids: usize,
}

impl ItemsMark {
    /// How many input items there were at this point.
    pub(super) fn items(self) -> usize {
        self.items
    }
}

/// The input items built so far, and the call ids used.
#[derive(Debug, Default)]
pub(super) struct Items {
    pub(super) input: Vec<Value>,
    used: UniqueIds,
    /// Request ids of the calls of the last assistant message, by their own id.
    current: HashMap<String, String>,
}

impl Items {
    /// Adds one message of the neutral sequence.
    pub(super) fn push(&mut self, out: Out<'_>) {
        match out {
            Out::Msg(msg) if msg.role == Role::Assistant => {
                self.push_assistant(&msg.pieces, &msg.calls, msg.ext.get(ITEM_IDS_EXTENSION));
            }
            Out::Msg(msg) => {
                let content: Vec<Value> = msg.pieces.iter().filter_map(input_part).collect();
                if !content.is_empty() {
                    let role = if msg.role == Role::System {
                        "system"
                    } else {
                        "user"
                    };
                    self.input.push(message_item(role, content, None));
                }
            }
            Out::Res {
                id, content, media, ..
            } => {
                let call_id = self.current.get(&id).cloned().unwrap_or(id);
                let output = if media.is_empty() {
                    Value::String(content.into_owned())
                } else {
                    let mut parts = vec![json!({"type": "input_text", "text": content.as_ref()})];
                    parts.extend(media.iter().filter_map(input_part));
                    Value::Array(parts)
                };
                self.input.push(object([
                    ("type", Value::from("function_call_output")),
                    ("call_id", Value::String(call_id)),
                    ("output", output),
                ]));
            }
        }
    }

    fn push_assistant(&mut self, pieces: &[Piece<'_>], calls: &[OutCall<'_>], ids: Option<&Value>) {
        self.current.clear();
        let ids: &[Value] = ids.and_then(Value::as_array).map_or(&[], Vec::as_slice);
        let mut next_id = ids.iter();
        let mut texts: Vec<String> = Vec::new();
        let flush = |texts: &mut Vec<String>,
                     input: &mut Vec<Value>,
                     next: &mut std::slice::Iter<'_, Value>| {
            if !texts.is_empty() {
                assistant_texts(std::mem::take(texts), next.next(), input);
            }
        };
        for piece in pieces {
            match piece {
                Piece::Text(t) => texts.push(t.to_string()),
                Piece::Image(_) | Piece::Document(_) => {
                    texts.extend(media_note(piece));
                }
                Piece::Reasoning(r) => {
                    if let Some(item) = reasoning_item(r) {
                        flush(&mut texts, &mut self.input, &mut next_id);
                        self.input.push(item);
                    }
                }
                Piece::Call(k) => {
                    let Some(c) = calls.get(*k) else { continue };
                    flush(&mut texts, &mut self.input, &mut next_id);
                    let call_id = self.used.unique(&c.id);
                    self.current.insert(c.id.clone(), call_id.clone());
                    let mut item = Map::new();
                    item.insert("type".into(), json!("function_call"));
                    if let Some(id) = &c.call.provider_id {
                        item.insert("id".into(), json!(id));
                    }
                    item.insert("call_id".into(), json!(call_id));
                    item.insert("name".into(), json!(tool_name(&c.call.name)));
                    item.insert(
                        "arguments".into(),
                        Value::String(c.call.arguments.to_json_string()),
                    );
                    self.input.push(Value::Object(item));
                }
            }
        }
        flush(&mut texts, &mut self.input, &mut next_id);
    }

    /// Where the items stand now.
    pub(super) fn mark(&self) -> ItemsMark {
        ItemsMark {
            items: self.input.len(),
            ids: self.used.mark(),
        }
    }

    /// Back to where they stood at `mark`.
    pub(super) fn reset(&mut self, mark: ItemsMark) {
        self.input.truncate(mark.items);
        self.used.reset(mark.ids);
        self.current.clear();
    }
}

/// The request body: `{"input": [...]}`.
pub(super) fn body(input: Vec<Value>) -> Value {
    object([("input", Value::Array(input))])
}
