//! The neutral sequence as a Gemini `generateContent` body: `systemInstruction` and
//! `contents` of `user` and `model` turns, every model turn's calls answered, grouped and
//! in order, in the single user turn that follows.

mod placeholder;

use foldhash::HashMap;

use serde_json::{Map, Value, json};

use super::FIRST_TURN_NOTE;
use super::anthropic::input;
use super::neutral::{self, Out, OutCall, Piece, object, tool_name};
use super::openai::media_note;
use crate::history::History;
use crate::model::extensions::SYNTHESIZED_IDS;
use crate::model::message::Role;
use crate::model::parts::{MediaSource, Provider};
use crate::request::validate::GEMINI_IMAGE_MEDIA_TYPES;
pub use placeholder::{GeminiOptions, PLACEHOLDER_THOUGHT_SIGNATURE};

/// The `contents` built so far, and the calls of the last model turn by their id: the
/// name and whether the `id` is sent.
#[derive(Debug, Default)]
struct Contents {
    turns: Vec<Value>,
    calls: HashMap<String, (String, bool)>,
}

fn role_of(turn: &Value) -> Option<&str> {
    turn.get("role").and_then(Value::as_str)
}

/// A `functionResponse.response` for a result's text: `{"output": text}`, or
/// `{"error": text}` when the tool failed (the keys Google's documentation names).
fn response(content: &str, is_error: bool) -> Value {
    let key = if is_error { "error" } else { "output" };
    json!({ key: content })
}

/// A media piece as a Gemini part: `inlineData` (base64) or `fileData` (a URL); a
/// provider file id means nothing to Gemini and is sent as a text note, and so is an
/// image of a type outside [`GEMINI_IMAGE_MEDIA_TYPES`].
fn media_part(piece: &Piece<'_>) -> Option<Value> {
    let media = match piece {
        Piece::Image(m) | Piece::Document(m) => m,
        _ => return None,
    };
    let image = media.media_type.starts_with("image/");
    if image && !GEMINI_IMAGE_MEDIA_TYPES.contains(&media.media_type.as_str()) {
        return Some(json!({ "text": media_note(piece) }));
    }
    Some(match &media.source {
        MediaSource::Base64 { data } => {
            json!({"inlineData": {"mimeType": media.media_type, "data": data}})
        }
        MediaSource::Url { url } => {
            json!({"fileData": {"mimeType": media.media_type, "fileUri": url}})
        }
        _ => json!({ "text": media_note(piece) }),
    })
}

/// The parts of one message's pieces. Gemini reasoning is replayed as it came: a thought
/// summary as a `thought: true` text part, a signature on the part right after it (a
/// signature with no part after it, or before a blank text, on an empty text part, as
/// Gemini returns a last signature). Other providers' reasoning is not sent; reasoning
/// is only sent in model turns.
fn pieces_parts(
    pieces: Vec<Piece<'_>>,
    calls: &[OutCall<'_>],
    model: bool,
    mut call: impl FnMut(&OutCall<'_>) -> Value,
) -> Vec<Value> {
    let mut parts = Vec::with_capacity(pieces.len());
    let mut signature: Option<String> = None;
    for piece in pieces {
        let part = match &piece {
            Piece::Reasoning(r) if model && r.provider == Provider::Gemini => {
                if r.text.is_empty() {
                    signature = r.signature.clone().or(signature);
                    continue;
                }
                let mut p = object([
                    ("text", Value::String(r.joined_text())),
                    ("thought", Value::Bool(true)),
                ]);
                if let Some(sig) = &r.signature {
                    p["thoughtSignature"] = Value::String(sig.clone());
                }
                parts.push(p);
                continue;
            }
            Piece::Reasoning(_) => continue,
            Piece::Text(t) if t.trim().is_empty() && signature.is_none() => continue,
            Piece::Text(t) => json!({"text": t.as_ref()}),
            Piece::Call(k) => match calls.get(*k) {
                Some(c) => call(c),
                None => continue,
            },
            media => match media_part(media) {
                Some(p) => p,
                None => continue,
            },
        };
        parts.push(with_signature(part, signature.take()));
    }
    if let Some(sig) = signature {
        parts.push(with_signature(json!({"text": ""}), Some(sig)));
    }
    parts
}

fn with_signature(mut part: Value, signature: Option<String>) -> Value {
    if let (Some(sig), Value::Object(p)) = (signature, &mut part) {
        p.insert("thoughtSignature".into(), Value::String(sig));
    }
    part
}

impl Contents {
    fn push(&mut self, out: Out<'_>) {
        let (role, parts) = match out {
            Out::Msg(msg) => {
                let model = msg.role == Role::Assistant;
                if model && !msg.calls.is_empty() {
                    self.calls.clear();
                }
                let send_ids = msg.ext.get(SYNTHESIZED_IDS) != Some(&Value::Bool(true));
                let mut made = Vec::new();
                let parts = pieces_parts(msg.pieces, &msg.calls, model, |c| {
                    let name = tool_name(&c.call.name).to_owned();
                    let mut call = Map::new();
                    if send_ids {
                        call.insert("id".into(), Value::String(c.id.clone()));
                    }
                    call.insert("name".into(), Value::String(name.clone()));
                    call.insert("args".into(), input(&c.call.arguments));
                    made.push((c.id.clone(), name));
                    object([("functionCall", Value::Object(call))])
                });
                for (id, name) in made {
                    self.calls.insert(id, (name, send_ids));
                }
                (if model { "model" } else { "user" }, parts)
            }
            Out::Res {
                id,
                content,
                is_error,
                media,
                ..
            } => {
                let (name, send_id) = self
                    .calls
                    .get(&id)
                    .cloned()
                    .unwrap_or_else(|| ("tool".to_owned(), true));
                let mut r = Map::new();
                if send_id {
                    r.insert("id".into(), Value::String(id));
                }
                r.insert("name".into(), Value::String(name));
                r.insert("response".into(), response(&content, is_error));
                let mut parts = vec![object([("functionResponse", Value::Object(r))])];
                // What the tool returned besides its text, right after its response.
                parts.extend(media.iter().filter_map(media_part));
                ("user", parts)
            }
        };
        if parts.is_empty() {
            return;
        }
        match self.turns.last_mut() {
            Some(turn) if role_of(turn) == Some(role) => {
                if let Some(existing) = turn.get_mut("parts").and_then(Value::as_array_mut) {
                    existing.extend(parts);
                }
            }
            _ => self.turns.push(object([
                ("role", Value::from(role)),
                ("parts", Value::Array(parts)),
            ])),
        }
    }
}

/// Renders the view as a Gemini `generateContent` request body without the model
/// parameters: `systemInstruction` (the pinned system entries, one text part each;
/// omitted when nothing is pinned) and `contents`.
///
/// Turns have the roles `user` and `model`; consecutive messages of one role are merged
/// into one turn. Assistant text and calls become `text` and `functionCall {id, name,
/// args}` parts of a model turn (non-object arguments wrapped as `{"arguments": ...}`);
/// all the results answering one model turn's calls go, as `functionResponse {id, name,
/// response}` parts equal in number and in the order of the calls, in the single user
/// turn that follows. A result's text is sent as `{"output": text}`, or
/// `{"error": text}` when the tool failed. Calls imported from Gemini without ids are
/// sent without ids (their responses too); otherwise the history's call ids are sent.
/// Blank texts are left out, and a view whose first turn would be the model's starts
/// with a user turn holding [`FIRST_TURN_NOTE`](super::FIRST_TURN_NOTE), as the other
/// formats do. Extensions are not rendered (none has a place in this format).
///
/// Images and documents are `inlineData {mimeType, data}` (base64) or `fileData
/// {mimeType, fileUri}` (a URL) parts, in any turn; media a tool returned follow its
/// `functionResponse`; a provider file id, or an image of a type outside
/// [`GEMINI_IMAGE_MEDIA_TYPES`](crate::render::validate::GEMINI_IMAGE_MEDIA_TYPES), is sent as a
/// text note. Gemini reasoning is
/// replayed verbatim: a `Reasoning { provider: Gemini, signature, .. }` part's
/// `thoughtSignature` goes on the part right after it (the part it signed), a thought
/// summary (reasoning with text) is a `thought: true` text part. Reasoning from another
/// provider is not sent (its signatures mean nothing to Gemini).
///
/// ```
/// use favur_context::{fuzzy, strict, History};
/// use favur_context::render::render_gemini;
/// use favur_context::render::validate::validate_gemini_strict;
/// let mut h = History::new();
/// h.pin(strict!(system: "You are a coding agent."));
/// h.append(strict!(user: "List the files."));
/// h.append(fuzzy!(tool_call: "c1", "bash", serde_json::json!({"command": "ls"})));
/// h.append(fuzzy!(tool_result("c1"): "Cargo.toml\nsrc"));
/// let body = render_gemini(&h);
/// assert_eq!(body["systemInstruction"]["parts"][0]["text"], "You are a coding agent.");
/// assert_eq!(body["contents"][1]["parts"][0]["functionCall"]["name"], "bash");
/// assert_eq!(body["contents"][2]["parts"][0]["functionResponse"]["response"]["output"], "Cargo.toml\nsrc");
/// validate_gemini_strict(&body).unwrap();
/// ```
pub fn render_gemini(history: &History) -> Value {
    render_gemini_with(history, &GeminiOptions::default())
}

/// [`render_gemini`] with `options`: for a Gemini 3 model
/// ([`GeminiOptions::for_model`]), the first call of each step of the current turn that
/// has no thought signature (made by another provider, or recorded without Gemini
/// reasoning) carries the placeholder Google documents for it,
/// [`PLACEHOLDER_THOUGHT_SIGNATURE`].
///
/// ```
/// use favur_context::{fuzzy, strict, History};
/// use favur_context::render::{render_gemini_with, GeminiOptions, PLACEHOLDER_THOUGHT_SIGNATURE};
/// let mut h = History::new();
/// h.append(strict!(user: "List the files."));
/// h.append(fuzzy!(tool_call: "c1", "bash", serde_json::json!({"command": "ls"})));
/// h.append(fuzzy!(tool_result("c1"): "Cargo.toml"));
/// let body = render_gemini_with(&h, &GeminiOptions::for_model("gemini-3-pro-preview"));
/// assert_eq!(body["contents"][1]["parts"][0]["thoughtSignature"], PLACEHOLDER_THOUGHT_SIGNATURE);
/// let older = render_gemini_with(&h, &GeminiOptions::for_model("gemini-2.5-pro"));
/// assert!(older["contents"][1]["parts"][0].get("thoughtSignature").is_none());
/// ```
pub fn render_gemini_with(history: &History, options: &GeminiOptions) -> Value {
    let (pinned, seq) = neutral::neutral(history);
    let mut contents = Contents::default();
    for out in seq {
        contents.push(out);
    }
    // Gemini sends less than the neutral sequence (no other provider's reasoning): the
    // first turn note goes first here too when the first turn left is the model's, or
    // when nothing is left of a view that is not empty.
    let model_first = contents
        .turns
        .first()
        .map_or(!history.view().is_empty(), |t| role_of(t) == Some("model"));
    if model_first {
        let note = json!({"role": "user", "parts": [{"text": FIRST_TURN_NOTE}]});
        contents.turns.insert(0, note);
    }
    if options.signs_placeholders() {
        placeholder::sign_current_turn(&mut contents.turns);
    }
    let mut body = Map::new();
    if !pinned.is_empty() {
        let parts: Vec<Value> = pinned
            .into_iter()
            .map(|(_, text)| object([("text", Value::String(text))]))
            .collect();
        body.insert(
            "systemInstruction".into(),
            object([("parts", Value::Array(parts))]),
        );
    }
    body.insert("contents".into(), Value::Array(contents.turns));
    Value::Object(body)
}
