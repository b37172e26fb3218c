//! The neutral sequence as a Gemini `generateContent` body: `systemInstruction` and
//! `contents` of `user` and `model` turns, every model turn's calls answered, grouped and
//! in order, in the single user turn that follows.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::anthropic::input;
use super::neutral::{self, Out, tool_name};
use crate::history::History;
use crate::model::message::Role;

/// The message extension an import sets on a model turn whose Gemini calls had no ids
/// (the ids it holds were synthesized): such calls, and their responses, are rendered
/// without `id`, as they came.
pub(crate) const SYNTHESIZED_IDS: &str = "favur_gemini_synthesized_ids";

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
pub(crate) fn response(content: &str, is_error: bool) -> Value {
    let key = if is_error { "error" } else { "output" };
    json!({ key: content })
}

impl Contents {
    fn push(&mut self, out: Out<'_>) {
        let (role, parts) = match out {
            Out::Msg {
                role,
                texts,
                calls,
                ext,
            } => {
                let mut parts: Vec<Value> = texts
                    .into_iter()
                    .filter(|t| !t.trim().is_empty())
                    .map(|t| json!({"text": t.into_owned()}))
                    .collect();
                if role == Role::Assistant && !calls.is_empty() {
                    self.calls.clear();
                }
                let send_ids = ext.get(SYNTHESIZED_IDS) != Some(&Value::Bool(true));
                for c in calls {
                    let name = tool_name(&c.call.name).to_owned();
                    let mut call = Map::new();
                    if send_ids {
                        call.insert("id".into(), Value::String(c.id.clone()));
                    }
                    call.insert("name".into(), Value::String(name.clone()));
                    call.insert("args".into(), input(&c.call.arguments));
                    self.calls.insert(c.id, (name, send_ids));
                    parts.push(json!({ "functionCall": call }));
                }
                let role = if role == Role::Assistant {
                    "model"
                } else {
                    "user"
                };
                (role, parts)
            }
            Out::Res {
                id,
                content,
                is_error,
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
                ("user", vec![json!({ "functionResponse": r })])
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
            _ => self.turns.push(json!({"role": role, "parts": parts})),
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
/// ```
/// use favur_context::{fuzzy, strict, History};
/// use favur_context::render::render_gemini;
/// use favur_context::validate::validate_gemini_strict;
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
    let (pinned, seq) = neutral::neutral(history);
    let mut contents = Contents::default();
    for out in seq {
        contents.push(out);
    }
    let mut body = Map::new();
    if !pinned.is_empty() {
        let parts: Vec<Value> = pinned
            .into_iter()
            .map(|(_, text)| json!({ "text": text }))
            .collect();
        body.insert("systemInstruction".into(), json!({ "parts": parts }));
    }
    body.insert("contents".into(), Value::Array(contents.turns));
    Value::Object(body)
}
