//! Gemini `generateContent` `contents` (with an optional `systemInstruction`).
//!
//! Calls without ids get deterministic ones (`gemini_<content>_<part>`) and are paired
//! with the responses of the next user turn in order; the model turn is marked so the
//! Gemini renderer sends them without ids again, as they came.

use std::borrow::Borrow;

use serde_json::{Map, Value};

use super::{Calls, ImportError, Sink, TranscriptMessage, bad, msg, nonempty_str, object, role_of};
use crate::model::extensions::SYNTHESIZED_IDS;
use crate::model::message::{Arguments, Message, Part, Role, ToolCall, ToolResult};
use crate::model::parts::{Media, Provider, Reasoning};

fn system(system: Option<&Value>, sink: &mut Sink<'_>) -> Result<(), ImportError> {
    let Some(system) = system else {
        return Ok(());
    };
    let Some(Value::Array(parts)) = system.get("parts") else {
        return Err(ImportError::Shape(
            "`systemInstruction` must be a content with a `parts` array".into(),
        ));
    };
    for (k, p) in parts.iter().enumerate() {
        let Some(Value::String(text)) = p.get("text") else {
            return Err(ImportError::Shape(format!(
                "systemInstruction part {k} is not a text part"
            )));
        };
        let mut m = msg(0, Some(k), Message::system(text.clone()));
        m.pin = true;
        sink(m)?;
    }
    Ok(())
}

/// The text of a `functionResponse.response`, and whether it reports an error:
/// `{"output": text}` and `{"error": text}` give the text (the form the renderer sends),
/// any other object its JSON text.
pub(crate) fn response_text(response: &Map<String, Value>) -> (String, bool) {
    if response.len() == 1 {
        match (response.get("output"), response.get("error")) {
            (Some(Value::String(s)), _) => return (s.clone(), false),
            (_, Some(Value::String(s))) => return (s.clone(), true),
            _ => {}
        }
    }
    (Value::Object(response.clone()).to_string(), false)
}

/// A part's single data field, its name and value.
fn data(index: usize, k: usize, p: &Value) -> Result<(&str, &Value), ImportError> {
    let Some(obj) = p.as_object() else {
        return Err(bad(index, format!("part {k} is not an object")));
    };
    for key in [
        "text",
        "functionCall",
        "functionResponse",
        "inlineData",
        "fileData",
    ] {
        if let Some(v) = obj.get(key) {
            return Ok((key, v));
        }
    }
    match obj
        .keys()
        .find(|k| *k != "thoughtSignature" && *k != "thought")
    {
        Some(other) => Err(bad(
            index,
            format!("part {k}: `{other}` parts are not supported"),
        )),
        None => Err(bad(index, format!("part {k} holds no data"))),
    }
}

fn name_of<'v>(
    index: usize,
    what: &str,
    v: &'v Map<String, Value>,
) -> Result<&'v str, ImportError> {
    nonempty_str(v.get("name"))
        .ok_or_else(|| bad(index, format!("a `{what}` has no `name` string")))
}

fn id_of<'v>(
    index: usize,
    what: &str,
    v: &'v Map<String, Value>,
) -> Result<Option<&'v str>, ImportError> {
    match v.get("id") {
        None => Ok(None),
        Some(Value::String(id)) if !id.is_empty() => Ok(Some(id)),
        Some(_) => Err(bad(
            index,
            format!("a `{what}` has an `id` that is not a non-empty string"),
        )),
    }
}

/// An `inlineData` (base64) or `fileData` (URL) part as an image (`image/*`) or a
/// document (any other type).
fn media(index: usize, k: usize, kind: &str, v: &Value) -> Result<Part, ImportError> {
    let field = if kind == "inlineData" {
        "data"
    } else {
        "fileUri"
    };
    let (Some(Value::String(mime)), Some(Value::String(at))) = (v.get("mimeType"), v.get(field))
    else {
        return Err(bad(
            index,
            format!("part {k}: `{kind}` needs `mimeType` and `{field}` strings"),
        ));
    };
    let m = if kind == "inlineData" {
        Media::base64(mime.clone(), at.clone())
    } else {
        Media::url(mime.clone(), at.clone())
    };
    Ok(if mime.starts_with("image/") {
        Part::Image(Box::new(m))
    } else {
        Part::Document(Box::new(m))
    })
}

/// A model part's `thoughtSignature` and whether it is a thought summary.
fn thought(index: usize, k: usize, p: &Value) -> Result<(Option<String>, bool), ImportError> {
    let signature = match p.get("thoughtSignature") {
        None => None,
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(_) => {
            return Err(bad(
                index,
                format!("part {k}: `thoughtSignature` is not a non-empty string"),
            ));
        }
    };
    let is_thought = match p.get("thought") {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(_) => return Err(bad(index, format!("part {k}: `thought` is not a boolean"))),
    };
    Ok((signature, is_thought))
}

/// The calls of the last model turn, waiting for the next user turn's responses.
struct Pending {
    index: usize,
    calls: Vec<ToolCall>,
}

/// The model turn `index`'s parts, as one assistant message; its calls are recorded.
fn model_turn(
    index: usize,
    parts: &[Value],
    calls: &mut Calls,
) -> Result<(Message, Vec<ToolCall>), ImportError> {
    let mut out = Vec::with_capacity(parts.len());
    let mut made = Vec::new();
    let (mut with_id, mut without_id) = (false, false);
    for (k, p) in parts.iter().enumerate() {
        let (signature, is_thought) = thought(index, k, p)?;
        let kind = data(index, k, p)?;
        if is_thought {
            out.push(thought_part(index, k, kind, signature)?);
            continue;
        }
        if let Some(sig) = signature {
            // The signature of the part it sits on, immediately before it.
            out.push(Part::Reasoning(Box::new(Reasoning::gemini_signature(sig))));
        }
        match kind {
            ("text", Value::String(t)) => out.push(Part::Text(t.clone())),
            (kind @ ("inlineData" | "fileData"), v) => out.push(media(index, k, kind, v)?),
            ("functionCall", Value::Object(c)) => {
                let (call, has_id) = function_call(index, k, c)?;
                with_id |= has_id;
                without_id |= !has_id;
                made.push(call.clone());
                out.push(Part::ToolCall(Box::new(call)));
            }
            ("functionResponse", _) => {
                return Err(bad(
                    index,
                    format!("part {k}: a functionResponse is not allowed in a model turn"),
                ));
            }
            (kind, _) => return Err(bad(index, format!("part {k}: `{kind}` has the wrong type"))),
        }
    }
    if with_id && without_id {
        return Err(bad(
            index,
            "the calls of one turn either all have an `id` or none has",
        ));
    }
    calls.made_all(index, &made)?;
    let mut message = Message::new(Role::Assistant, out);
    if without_id {
        message
            .extensions
            .insert(SYNTHESIZED_IDS.into(), Value::Bool(true));
    }
    Ok((message, made))
}

/// A thought summary (part `k`, of `kind`): one reasoning part holding its text and
/// signature.
fn thought_part(
    index: usize,
    k: usize,
    kind: (&str, &Value),
    signature: Option<String>,
) -> Result<Part, ImportError> {
    let ("text", Value::String(t)) = kind else {
        return Err(bad(
            index,
            format!("part {k}: only a text part can be a thought"),
        ));
    };
    if t.is_empty() && signature.is_none() {
        return Err(bad(index, format!("part {k}: an empty thought")));
    }
    Ok(Part::Reasoning(Box::new(Reasoning {
        text: vec![t.clone()],
        signature,
        ..Reasoning::new(Provider::Gemini)
    })))
}

/// A `functionCall` (part `k`) as a tool call, and whether it had an id of its own (one
/// is made up from the turn and part otherwise).
fn function_call(
    index: usize,
    k: usize,
    c: &Map<String, Value>,
) -> Result<(ToolCall, bool), ImportError> {
    let name = name_of(index, "functionCall", c)?;
    let (id, has_id) = match id_of(index, "functionCall", c)? {
        Some(id) => (id.to_owned(), true),
        None => (format!("gemini_{index}_{k}"), false),
    };
    let args = match c.get("args") {
        None => Value::Object(Map::new()),
        Some(a @ Value::Object(_)) => a.clone(),
        Some(_) => {
            return Err(bad(
                index,
                format!("call `{name}`: `args` is not an object"),
            ));
        }
    };
    Ok((ToolCall::new(id, name, Arguments::Json(args)), has_id))
}

/// The user turn `index`: one result per `functionResponse` (answering the pending calls
/// in order), then its texts as one user message.
fn user_turn(
    index: usize,
    parts: &[Value],
    pending: Option<Pending>,
    calls: &mut Calls,
    out: &mut Vec<TranscriptMessage>,
) -> Result<(), ImportError> {
    let waiting = pending.as_ref().map_or(&[][..], |p| &p.calls[..]);
    let mut texts = Vec::new();
    let mut first_text = None;
    let mut answered = 0usize;
    for (k, p) in parts.iter().enumerate() {
        if p.get("thoughtSignature").is_some() {
            return Err(bad(
                index,
                format!("part {k}: a thoughtSignature in a user turn"),
            ));
        }
        match data(index, k, p)? {
            ("text", Value::String(t)) => {
                texts.push(Part::Text(t.clone()));
                first_text.get_or_insert(k);
            }
            (kind @ ("inlineData" | "fileData"), v) => {
                let m = media(index, k, kind, v)?;
                // Media right after a response are what that tool returned.
                match out.last_mut() {
                    Some(t) if t.is_result && t.index == index && texts.is_empty() => {
                        t.message.parts.push(m);
                    }
                    _ => {
                        texts.push(m);
                        first_text.get_or_insert(k);
                    }
                }
            }
            ("functionResponse", Value::Object(r)) => {
                out.push(function_response(index, k, r, waiting, answered, calls)?);
                answered += 1;
            }
            ("functionCall", _) => {
                return Err(bad(
                    index,
                    format!("part {k}: a functionCall is not allowed in a user turn"),
                ));
            }
            (kind, _) => return Err(bad(index, format!("part {k}: `{kind}` has the wrong type"))),
        }
    }
    if answered != waiting.len() {
        return Err(ImportError::ResponseCount {
            index,
            calls: waiting.len(),
            responses: answered,
        });
    }
    if !texts.is_empty() {
        out.push(msg(
            index,
            first_text.filter(|k| *k > 0),
            Message::new(Role::User, texts),
        ));
    }
    Ok(())
}

/// A `functionResponse` (part `k`) as the result of the call it answers: the one with its
/// id, or without ids the next waiting call (`answered` are answered already).
fn function_response(
    index: usize,
    k: usize,
    r: &Map<String, Value>,
    waiting: &[ToolCall],
    answered: usize,
    calls: &mut Calls,
) -> Result<TranscriptMessage, ImportError> {
    let name = name_of(index, "functionResponse", r)?;
    let Some(Value::Object(response)) = r.get("response") else {
        return Err(bad(
            index,
            format!("the response for `{name}` has no object `response`"),
        ));
    };
    let id = match id_of(index, "functionResponse", r)? {
        Some(id) => id.to_owned(),
        None => match waiting.get(answered) {
            Some(call) => call.id.clone(),
            None => {
                return Err(ImportError::ResponseCount {
                    index,
                    calls: waiting.len(),
                    responses: answered + 1,
                });
            }
        },
    };
    let call = calls.answer(index, &id)?;
    if call.name != name {
        return Err(bad(
            index,
            format!(
                "functionResponse {answered} is for `{name}`, the call it answers is `{}`",
                call.name
            ),
        ));
    }
    let (content, is_error) = response_text(response);
    let message = Message::new(
        Role::Tool,
        vec![Part::ToolResult(ToolResult {
            call_id: id,
            content,
            is_error,
        })],
    );
    let mut t = msg(index, Some(k), message);
    t.action = Some(call);
    t.is_result = true;
    Ok(t)
}

/// Reads the contents one by one, handing each message they hold to `sink`, after the
/// `systemInstruction`'s (Gemini has no exit record).
pub(super) fn parse_each<M: Borrow<Value>>(
    system_instruction: Option<&Value>,
    list: impl Iterator<Item = Result<M, ImportError>>,
    sink: &mut Sink<'_>,
) -> Result<Option<String>, ImportError> {
    system(system_instruction, sink)?;
    let mut calls = Calls::default();
    let mut pending: Option<Pending> = None;
    // The messages of one content (a user turn's results take the media after them).
    let mut turn = Vec::new();
    for (index, c) in list.enumerate() {
        let c = c?;
        let obj = object(index, c.borrow())?;
        let role = role_of(index, obj)?;
        let parts = match obj.get("parts") {
            Some(Value::Array(p)) if !p.is_empty() => p,
            _ => return Err(bad(index, "`parts` must be a non-empty array")),
        };
        match role {
            "user" => user_turn(index, parts, pending.take(), &mut calls, &mut turn)?,
            "model" => {
                if let Some(p) = pending.take() {
                    return Err(ImportError::ResponseCount {
                        index: p.index,
                        calls: p.calls.len(),
                        responses: 0,
                    });
                }
                let (message, made) = model_turn(index, parts, &mut calls)?;
                if !made.is_empty() {
                    pending = Some(Pending { index, calls: made });
                }
                turn.push(msg(index, None, message));
            }
            other => return Err(bad(index, format!("unknown role `{other}`"))),
        }
        turn.drain(..).try_for_each(&mut *sink)?;
    }
    Ok(None)
}
