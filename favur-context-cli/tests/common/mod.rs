//! Shared test helpers.
#![allow(dead_code)]

use favur_context::Message;
use favur_context::import::rules::Rules;
use serde_json::{Value, json};

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

/// A fresh directory for one test, named after it and this process.
pub fn temp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("favur-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
