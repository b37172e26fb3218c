//! Shared test helpers.
#![allow(dead_code)]

use favur_context::import::Format;
use favur_context::import::rules::Rules;
use favur_context::render::Form;
use favur_context::{History, Message};
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

/// The shipped rules file.
pub const RULES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../rules/coding-agent-shell.toml"
);

/// Parses a command line (`argv[0]` is the program name) into one command's arguments.
pub fn parse_args<A: clap::Args>(
    argv: impl IntoIterator<Item = impl Into<std::ffi::OsString> + Clone>,
) -> A {
    #[derive(clap::Parser)]
    struct Cli<A: clap::Args> {
        #[command(flatten)]
        args: A,
    }
    <Cli<A> as clap::Parser>::parse_from(argv).args
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

/// A chat of plain messages, `(role, content)` each, as an OpenAI transcript.
pub fn chat(messages: &[(&str, &str)]) -> Value {
    let messages = messages.iter();
    Value::Array(
        messages
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect(),
    )
}

pub fn call(id: &str, command: &str) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
        "function": {"name": "bash", "arguments": json!({"command": command}).to_string()}}]})
}

pub fn result(id: &str, content: &str) -> Value {
    json!({"role": "tool", "tool_call_id": id, "content": content})
}

#[path = "../../../tests/tests/common/traces.rs"]
mod traces;
#[allow(unused_imports)]
pub use traces::{trace_files, traces_dir};

/// Appends to `j` an assistant message calling `bash` with `command` as call `id`
/// (fuzzy), as an agent records its model's reply.
pub fn append_bash_call(j: &mut favur_context::journal::JournaledHistory, id: &str, command: &str) {
    use favur_context::{Retention, Store, ToolCall};
    let call = ToolCall::new(id, "bash", json!({ "command": command }));
    j.append(Message::assistant_calls([call]).classify(Retention::Fuzzy))
        .unwrap();
}

#[path = "../../../tests/tests/common/edits.rs"]
mod edits;
#[allow(unused_imports)]
pub use edits::drop_at;
