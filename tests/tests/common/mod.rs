//! Helpers shared by the integration tests (included with `mod common;`).
#![allow(dead_code)]

use favur_context::TokenCounter;

use favur_context::render::{render_anthropic, render_openai};
use favur_context::validate::{
    validate_anthropic, validate_anthropic_strict, validate_openai, validate_openai_strict,
};
use favur_context::{
    CallSite, Compaction, Edit, Entry, EntryId, EntryKind, Form, History, Message, Retention,
};

/// A summary entry with the next id of `h`, replacing `replaces`.
pub fn summary(h: &History, replaces: &[EntryId], text: &str) -> Entry {
    Entry::new(
        h.next_id(),
        Retention::Fuzzy,
        3,
        CallSite::new("test", 1, 1),
        EntryKind::Summary {
            replaces: replaces.to_vec(),
        },
        Message::assistant(text),
    )
}

pub fn reform(id: EntryId, form: Form) -> Edit {
    Edit::Reform {
        id,
        form,
        tokens: 1,
    }
}

pub fn apply(h: &mut History, edits: Vec<Edit>) {
    h.apply(Compaction {
        tier: 1,
        edits,
        usage_after: None,
    })
    .expect("compaction applies");
}

/// Renders both formats and checks them with the lenient validators, and with the strict
/// ones unless the history ends in calls in flight.
pub fn render_valid(h: &History, strict: bool) -> (serde_json::Value, serde_json::Value) {
    let openai = render_openai(h);
    let anthropic = render_anthropic(h).to_value();
    if let Err(e) = validate_openai(&openai) {
        panic!("openai invalid: {e}\n{openai:#}");
    }
    if let Err(e) = validate_anthropic(&anthropic) {
        panic!("anthropic invalid: {e}\n{anthropic:#}");
    }
    if strict {
        if let Err(e) = validate_openai_strict(&openai) {
            panic!("openai invalid (strict): {e}\n{openai:#}");
        }
        if let Err(e) = validate_anthropic_strict(&anthropic) {
            panic!("anthropic invalid (strict): {e}\n{anthropic:#}");
        }
    }
    (openai, anthropic)
}

/// A counter independent of the library's default heuristic, so snapshots show
/// deterministic, easily checked counts: words of text plus one per part.
pub struct Words;

impl TokenCounter for Words {
    fn count_text(&self, text: &str) -> u32 {
        text.split_whitespace().count() as u32
    }

    fn count_message(&self, message: &Message) -> u32 {
        self.count_text(&message.text()) + message.parts.len() as u32
    }
}

pub fn history() -> History {
    History::with_counter(Words)
}

/// The real traces folder: `$FAVUR_TRACES`, or `shared/traces` beside the checkout.
/// Missing, the calling test fails when `CI=true` (the traces are part of the CI
/// contract), and otherwise prints a visible `SKIPPED:` line and passes.
pub fn traces_dir() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("FAVUR_TRACES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/traces"))
        });
    if dir.is_dir() {
        return Some(dir);
    }
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

/// Every `.json` file under `dir`, sorted (the trace files of `traces_dir()`).
pub fn trace_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in read.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// A tool whose output is forgettable: compaction drops or summarizes it first.
pub struct Ls;

#[favur_context::retention(forgettable)]
impl favur_context::Tool for Ls {
    fn name(&self) -> &str {
        "ls"
    }
    fn description(&self) -> &str {
        "List files"
    }
    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({})
    }
    fn call(&self, _: &serde_json::Value) -> Result<String, String> {
        Ok("Cargo.toml\nsrc/\ntests/".repeat(8))
    }
}

/// The texts of the entries `h` holds, in order.
pub fn texts(h: &History) -> Vec<String> {
    h.entries().iter().map(|e| e.message().text()).collect()
}
