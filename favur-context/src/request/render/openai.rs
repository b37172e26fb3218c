//! The neutral sequence as OpenAI Chat Completions messages.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use super::neutral::{Out, tool_name};
use crate::model::entry::Entry;
use crate::model::message::Role;

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

fn content(texts: &[Cow<'_, str>], null_if_empty: bool) -> Value {
    match texts {
        [] if null_if_empty => Value::Null,
        [] => Value::String(String::new()),
        [one] => Value::String(one.to_string()),
        many => Value::Array(
            many.iter()
                .map(|t| json!({"type": "text", "text": t.as_ref()}))
                .collect(),
        ),
    }
}

/// One message of the neutral sequence as an OpenAI message.
pub(super) fn message(out: Out<'_>) -> Value {
    let mut m = Map::new();
    match out {
        Out::Msg {
            role,
            texts,
            calls,
            ext,
        } => {
            m.insert("role".into(), json!(role.as_str()));
            m.insert(
                "content".into(),
                content(&texts, role == Role::Assistant && !calls.is_empty()),
            );
            if !calls.is_empty() {
                let calls: Vec<Value> = calls
                    .iter()
                    .map(|c| {
                        json!({
                            "id": c.id,
                            "type": "function",
                            "function": {"name": tool_name(&c.call.name), "arguments": c.call.arguments.to_json_string()},
                        })
                    })
                    .collect();
                m.insert("tool_calls".into(), Value::Array(calls));
            }
            super::add_extensions(&mut m, ext, &OPENAI_OWNED);
        }
        Out::Res {
            id, content, ext, ..
        } => {
            m.insert("role".into(), json!("tool"));
            m.insert("tool_call_id".into(), Value::String(id));
            m.insert("content".into(), Value::String(content.into_owned()));
            super::add_extensions(&mut m, ext, &OPENAI_OWNED);
        }
    }
    Value::Object(m)
}
