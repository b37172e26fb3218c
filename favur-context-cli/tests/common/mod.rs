//! Shared test helpers: a small renderer whose output the tests can predict.
#![allow(dead_code)]

use favur_context::rules::Rules;
use favur_context::{Form, History, Message};
use favur_context_cli::ReplayError;
use favur_context_cli::replay::{Prepared, Renderer};
use favur_context_cli::transcript::{ClassifiedTranscript, Transcript};
use serde_json::{Value, json};

/// Renders each pinned entry and view item as `{"role", "content"}`: the text, the tool
/// call commands and the tool results of the message; a placeholder as `[compacted #id]`.
pub struct PlainRenderer;

pub fn content(m: &Message) -> String {
    let mut out = m.text();
    for c in m.tool_calls() {
        out.push_str(&format!(
            "\n$ {}",
            favur_context::rules::command_of(&c.arguments)
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
            let e = h.entry(*id).ok_or(ReplayError::Internal("pinned"))?;
            out.push(json!({"role": e.message().role.as_str(), "content": content(e.message())}));
        }
        for item in h.view().items() {
            let e = h.entry(item.id).ok_or(ReplayError::Internal("item"))?;
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

pub fn prepare(messages: Vec<Message>, rules: &Rules) -> Prepared {
    let t = Transcript {
        id: "hand".into(),
        messages,
    };
    Prepared::new(ClassifiedTranscript::classify(t, rules).expect("every message classified"))
}

pub fn names(rules: &Rules) -> Vec<String> {
    rules.rules().iter().map(|r| r.name().to_owned()).collect()
}

pub fn traces_dir() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("FAVUR_TRACES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/traces"))
        });
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: traces folder {} is absent (set FAVUR_TRACES to point at it)",
            dir.display()
        );
        None
    }
}

pub fn trace_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read traces dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
