//! Shared test helpers.
#![allow(dead_code)]

use favur_context::import::Format;
use favur_context::rules::Rules;
use favur_context::{Form, History, Message};
use favur_context_cli::ReplayError;
use favur_context_cli::replay::{Prepared, Renderer};
use favur_context_cli::transcript::ClassifiedTranscript;
use serde_json::{Value, json};

/// Renders each pinned entry and view item as `{"role", "content"}` with the message's
/// text, tool-call commands (`$ cmd`) and results: simple enough that the tests can work
/// out the expected figures by hand.
pub struct PlainRenderer;

pub fn content(m: &Message) -> String {
    let mut out = m.text();
    for c in m.tool_calls() {
        out.push_str(&format!(
            "$ {}",
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

/// Rules for the hand-made transcripts: `ls` output forgettable, `cat` output fuzzy,
/// everything else strict.
pub fn hand_rules() -> Rules {
    Rules::from_toml(
        r#"
        [[rule]]
        name = "listings"
        role = "tool"
        command = '^ls\b'
        class = "forgettable"
        [[rule]]
        name = "views"
        role = "tool"
        command = '^cat\b'
        class = "fuzzy"
        [[rule]]
        name = "rest"
        class = "strict"
        "#,
    )
    .expect("hand rules parse")
}

pub fn prepare(json: Value, rules: &Rules) -> Prepared {
    Prepared::new(
        ClassifiedTranscript::from_value("hand", Format::OpenAi, &json, rules)
            .expect("hand transcript imports"),
    )
}

pub fn call(id: &str, command: &str) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
        "function": {"name": "bash", "arguments": json!({"command": command}).to_string()}}]})
}

pub fn result(id: &str, content: &str) -> Value {
    json!({"role": "tool", "tool_call_id": id, "content": content})
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
        // Under CI the traces are part of the contract: missing, the test fails.
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "traces folder {} is missing and CI=true: set FAVUR_TRACES",
            dir.display()
        );
        // Written to stderr directly, not through `eprintln!`, so the test harness does not
        // capture it: the skip is visible in a normal `cargo test` run.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
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
