//! Helpers of the suites: those the binary's tests share (`tests/common`) and those that
//! need the library's own types.
#![allow(dead_code)]

use favur_context::import::Format;
use favur_context::import::rules::Rules;
use favur_context::render::Form;
use favur_context::{History, Message};
use serde_json::{Value, json};

use crate::ReplayError;
use crate::replay::{Prepared, Renderer};
use crate::transcript::ClassifiedTranscript;

#[path = "../../tests/common/mod.rs"]
mod shared;
pub use shared::*;

/// Renders each pinned entry and view item as `{"role", "content"}` with the message's
/// text, tool-call commands (`$ cmd`) and results: simple enough that the tests can work
/// out the expected figures by hand.
pub struct PlainRenderer;

pub fn content(m: &Message) -> String {
    let mut out = m.text();
    for c in m.tool_calls() {
        out.push_str(&format!(
            "$ {}",
            favur_context::import::rules::command_of(&c.arguments)
        ));
    }
    for r in m.tool_results() {
        out.push_str(&r.content);
    }
    out
}

impl Renderer for PlainRenderer {
    fn render(&self, h: &History) -> Result<Value, ReplayError> {
        let mut out = Vec::new();
        for id in h.pinned() {
            let e = h.recall(*id).map_err(|_| ReplayError::Internal("pinned"))?;
            out.push(json!({"role": e.message().role.as_str(), "content": content(e.message())}));
        }
        for item in h.view().items() {
            let e = h
                .recall(item.id)
                .map_err(|_| ReplayError::Internal("item"))?;
            let text = match &item.form {
                Form::Placeholder { .. } => format!("[compacted {}]", item.id),
                Form::Capped(m) => content(m),
                _ => content(e.message()),
            };
            out.push(json!({"role": e.message().role.as_str(), "content": text}));
        }
        Ok(Value::Array(out))
    }
}

pub fn prepare(json: Value, rules: &Rules) -> Prepared {
    Prepared::new(
        ClassifiedTranscript::from_value("hand", Format::OpenAi, &json, rules)
            .expect("hand transcript imports"),
    )
}

/// One rule putting every message in `class`.
pub fn rules(class: &str) -> Rules {
    Rules::from_toml(&format!("[[rule]]\nname = \"all\"\nclass = \"{class}\"\n"))
        .expect("one-rule file parses")
}

/// An OpenAI-format transcript with every message fuzzy, ready to replay.
pub fn prepared(json: Value) -> Prepared {
    prepare(json, &rules("fuzzy"))
}

/// Two user turns and two assistant replies, the first naming a file.
pub fn four_turns() -> Prepared {
    prepared(chat(&[
        ("user", "Fix it."),
        ("assistant", "Looking at src/parser.rs."),
        ("user", "Go on."),
        ("assistant", "Done."),
    ]))
}
