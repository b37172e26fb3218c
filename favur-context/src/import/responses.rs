//! OpenAI Responses transcripts: a list of input and output items, or an object with
//! `input` and/or `output` lists (read in that order; an item's index counts across
//! both) and optional `instructions` (a pinned system message, index 0).
//!
//! Items: `message` (or a typeless item with a `role`), `reasoning`, `function_call`
//! and `function_call_output`. The output items between two input items (user, system
//! or developer messages, call outputs) are one assistant message, in their order:
//! reasoning parts (id, summary texts, `encrypted_content`), texts, calls (`id` kept as
//! the call's `provider_id`). Assistant `message` item ids are kept in the
//! `favur_item_ids` extension. Leading system and developer messages are pinned. Any
//! other item type is refused.

use serde_json::{Map, Value, json};

use super::{
    Calls, Format, ImportError, ParseOptions, Transcript, TranscriptMessage, arguments, bad,
    engine_fields, msg,
};
use crate::model::extensions::ITEM_IDS_EXTENSION;
use crate::model::message::{Message, Part, Role, ToolCall, ToolResult};
use crate::model::parts::Reasoning;

/// The items of a document: the list itself, or `input` then `output`.
fn items(value: &Value) -> Result<Vec<&Value>, ImportError> {
    let shape = || {
        ImportError::Shape(
            "expected a list of Responses items or an object with `input`/`output` lists".into(),
        )
    };
    match value {
        Value::Array(a) => Ok(a.iter().collect()),
        Value::Object(o) if o.contains_key("input") || o.contains_key("output") => {
            let mut out = Vec::new();
            for key in ["input", "output"] {
                match o.get(key) {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(a)) => out.extend(a),
                    // A plain string input is one user message.
                    Some(Value::String(_)) if key == "input" => out.push(&o["input"]),
                    Some(_) => return Err(ImportError::Shape(format!("`{key}` is not a list"))),
                }
            }
            Ok(out)
        }
        _ => Err(shape()),
    }
}

/// The assistant message being gathered from output items.
#[derive(Default)]
struct Turn {
    index: Option<usize>,
    parts: Vec<Part>,
    ids: Vec<Value>,
}

impl Turn {
    fn at(&mut self, index: usize) -> &mut Self {
        self.index.get_or_insert(index);
        self
    }

    /// The gathered message, its calls made.
    fn flush(
        &mut self,
        out: &mut Vec<TranscriptMessage>,
        calls: &mut Calls,
    ) -> Result<(), ImportError> {
        let Some(index) = self.index.take() else {
            return Ok(());
        };
        let mut message = Message::new(Role::Assistant, std::mem::take(&mut self.parts));
        let made: Vec<&ToolCall> = message.tool_calls().collect();
        calls.made_all(index, made.iter().copied())?;
        let ids = std::mem::take(&mut self.ids);
        if !ids.is_empty() {
            message
                .extensions
                .insert(ITEM_IDS_EXTENSION.into(), Value::Array(ids));
        }
        out.push(msg(index, None, message));
        Ok(())
    }
}

fn str_field<'a>(
    index: usize,
    obj: &'a Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<&'a str, ImportError> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s),
        _ => Err(bad(index, format!("{what} has no `{key}` string"))),
    }
}

/// Content parts of a message or a call output (`input_text`, `output_text`, `refusal`,
/// `input_image`, `input_file`).
fn content(index: usize, content: Option<&Value>) -> Result<Vec<Part>, ImportError> {
    let list = match content {
        Some(Value::String(s)) => return Ok(vec![Part::Text(s.clone())]),
        Some(Value::Array(a)) => a,
        _ => return Err(bad(index, "`content` must be a string or a list of parts")),
    };
    let mut parts = Vec::with_capacity(list.len());
    for (k, p) in list.iter().enumerate() {
        let s = |key: &str| p.get(key).and_then(Value::as_str);
        let name = s("filename");
        let part = match s("type") {
            Some("input_text" | "output_text") => match s("text") {
                Some(t) => Part::Text(t.to_owned()),
                None => return Err(bad(index, format!("content part {k} has no `text` string"))),
            },
            Some("refusal") => Part::Text(s("refusal").unwrap_or_default().to_owned()),
            Some(kind @ ("input_image" | "input_file")) => {
                let image = kind == "input_image";
                let url = if image {
                    s("image_url")
                } else {
                    s("file_data").or(s("file_url"))
                };
                super::parts::openai_media(index, image, url, s("file_id"), name)?
                    .ok_or_else(|| bad(index, format!("{kind} part {k} has no source")))?
            }
            Some(other) => {
                return Err(bad(
                    index,
                    format!("content part {k} of type `{other}` is not supported"),
                ));
            }
            None => return Err(bad(index, format!("content part {k} has no `type`"))),
        };
        parts.push(part);
    }
    Ok(parts)
}

fn reasoning(index: usize, obj: &Map<String, Value>) -> Result<Part, ImportError> {
    let id = str_field(index, obj, "id", "a reasoning item")?;
    let mut summary = Vec::new();
    for s in obj
        .get("summary")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match s.get("text").and_then(Value::as_str) {
            Some(t) => summary.push(t.to_owned()),
            None => return Err(bad(index, "a reasoning summary part has no `text` string")),
        }
    }
    let encrypted = match obj.get("encrypted_content") {
        None | Some(Value::Null) => None,
        Some(Value::String(e)) => Some(e.clone()),
        Some(_) => return Err(bad(index, "`encrypted_content` is not a string")),
    };
    super::parts::checked(
        index,
        Part::Reasoning(Box::new(Reasoning::openai(id, summary, encrypted))),
    )
}

pub(super) fn parse(value: &Value, options: ParseOptions) -> Result<Transcript, ImportError> {
    let mut out = Vec::new();
    if let Some(Value::String(instructions)) = value.get("instructions") {
        let mut m = msg(0, None, Message::system(instructions.clone()));
        m.pin = true;
        out.push(m);
    }
    let mut calls = Calls::default();
    let mut turn = Turn::default();
    let mut leading = true;
    for (index, item) in items(value)?.into_iter().enumerate() {
        let owned;
        let obj = match item {
            Value::Object(o) => o,
            Value::String(s) => {
                owned = json!({"role": "user", "content": s});
                owned
                    .as_object()
                    .ok_or_else(|| bad(index, "not an object"))?
            }
            _ => return Err(bad(index, "an item must be a JSON object")),
        };
        engine_fields(index, obj)?;
        let kind = match obj.get("type") {
            Some(Value::String(t)) => t.as_str(),
            None if obj.contains_key("role") => "message",
            _ => return Err(bad(index, "an item needs a `type` string")),
        };
        match kind {
            "message" => {
                let role = str_field(index, obj, "role", "a message")?;
                let parts = content(index, obj.get("content"))?;
                if role == "assistant" {
                    let t = turn.at(index);
                    t.parts.extend(parts);
                    t.ids.extend(obj.get("id").cloned());
                    leading = false;
                    continue;
                }
                turn.flush(&mut out, &mut calls)?;
                let role = match role {
                    "user" => Role::User,
                    "system" | "developer" => Role::System,
                    other => return Err(bad(index, format!("unknown role `{other}`"))),
                };
                let mut m = msg(index, None, Message::new(role, parts));
                m.pin = leading && role == Role::System;
                leading &= m.pin;
                out.push(m);
            }
            "reasoning" => {
                let part = reasoning(index, obj)?;
                turn.at(index).parts.push(part);
                leading = false;
            }
            "function_call" => {
                let call = function_call(index, obj, options)?;
                turn.at(index).parts.push(Part::ToolCall(Box::new(call)));
                leading = false;
            }
            "function_call_output" => {
                turn.flush(&mut out, &mut calls)?;
                leading = false;
                out.push(call_output(index, obj, &mut calls)?);
            }
            other => return Err(bad(index, format!("item type `{other}` is not supported"))),
        }
    }
    turn.flush(&mut out, &mut calls)?;
    Ok(Transcript::new(Format::Responses, out, None))
}

/// A `function_call` item as a tool call (the item's `id` kept as the provider's).
fn function_call(
    index: usize,
    obj: &Map<String, Value>,
    options: ParseOptions,
) -> Result<ToolCall, ImportError> {
    let call_id = str_field(index, obj, "call_id", "a function_call")?;
    let name = str_field(index, obj, "name", "a function_call")?;
    let args = arguments(index, call_id, obj.get("arguments"), options)?;
    let mut call = ToolCall::new(call_id, name, args);
    call.provider_id = obj.get("id").and_then(Value::as_str).map(str::to_owned);
    Ok(call)
}

/// A `function_call_output` item as the tool message answering its call: its texts
/// joined as the result, its other parts after it.
fn call_output(
    index: usize,
    obj: &Map<String, Value>,
    calls: &mut Calls,
) -> Result<TranscriptMessage, ImportError> {
    let call_id = str_field(index, obj, "call_id", "a function_call_output")?;
    let (text, media): (Vec<Part>, Vec<Part>) = content(index, obj.get("output"))?
        .into_iter()
        .partition(|p| matches!(p, Part::Text(_)));
    let text: Vec<&str> = text.iter().filter_map(Part::text).collect();
    let call = calls.answer(index, call_id)?;
    let mut parts = vec![Part::ToolResult(ToolResult {
        call_id: call_id.to_owned(),
        content: text.join("\n"),
        is_error: false,
    })];
    parts.extend(media);
    let mut m = msg(index, None, Message::new(Role::Tool, parts));
    m.action = Some(call);
    m.is_result = true;
    Ok(m)
}
