//! Import of a large transcript: peak memory and speed of reading a ~30 MB
//! mini-swe-agent trajectory into a history, through the parsed document
//! ([`import::parse`] then [`Transcript::import_into`]) and through the streaming
//! [`import::import`].
//!
//! The transcript is one shared trace (`$FAVUR_IMPORT_TRACE`, else the tool-calling run
//! `mini-swe-agent-deepseek-toolcalls/pylint-dev__astroid-1333.json` of the shared
//! traces) repeated to `$FAVUR_IMPORT_MB` (default 30) MB, call ids made unique per
//! repetition, its system prompt and exit record kept once. Each path runs in a fresh
//! child process (so peak RSS is its own), classified with `ShellCommandClassifier`.
//! Memory comes from a counting global allocator (bytes the program asked for, the
//! document's text excluded) and from `VmHWM` (the process's peak resident set).
//!
//! ```text
//! cargo bench -p favur-context --bench import_stream
//! ```
//!
//! [`Transcript::import_into`]: favur_context::import::Transcript::import_into

#[path = "common/counting.rs"]
mod counting;

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use favur_context::History;
use favur_context::import::shell::ShellCommandClassifier;
use favur_context::import::{self, Format};
use serde_json::Value;

#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

fn trace() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FAVUR_IMPORT_TRACE") {
        return Some(PathBuf::from(p));
    }
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/traces/mini-swe-agent-deepseek-toolcalls/pylint-dev__astroid-1333.json"
    ));
    p.is_file().then_some(p)
}

/// Suffixes the call ids of a message (`tool_calls[].id`, `tool_call_id`) with `~rep`.
fn unique_ids(m: &mut Value, rep: usize) {
    if let Some(Value::String(id)) = m.get_mut("tool_call_id") {
        id.push_str(&format!("~{rep}"));
    }
    if let Some(Value::Array(calls)) = m.get_mut("tool_calls") {
        for call in calls {
            if let Some(Value::String(id)) = call.get_mut("id") {
                id.push_str(&format!("~{rep}"));
            }
        }
    }
}

/// The trace repeated to about `mb` MB: a mini-swe-agent document `{"messages": [...]}`.
fn transcript(text: &str, mb: usize) -> String {
    let doc: Value = serde_json::from_str(text).expect("the trace is JSON");
    let messages = doc["messages"].as_array().cloned().unwrap_or_default();
    let role = |m: &Value| m["role"].as_str().unwrap_or("").to_owned();
    let exit: Vec<Value> = messages
        .iter()
        .filter(|m| role(m) == "exit")
        .cloned()
        .collect();
    let body: Vec<&Value> = messages.iter().filter(|m| role(m) != "exit").collect();
    let mut out = String::from("{\"source\": \"bench\", \"messages\": [");
    let mut first = true;
    let mut push = |out: &mut String, m: &Value| {
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&m.to_string());
    };
    let mut rep = 0;
    while out.len() < mb * 1_000_000 {
        for m in &body {
            if rep > 0 && role(m) == "system" {
                continue;
            }
            let mut m = (*m).clone();
            if rep > 0 {
                unique_ids(&mut m, rep);
            }
            push(&mut out, &m);
        }
        rep += 1;
    }
    for m in &exit {
        push(&mut out, m);
    }
    out.push_str("]}");
    out
}

/// One path, in this process: reads the document, imports it, prints a row.
fn child(path: &str, doc: &str) {
    let text = std::fs::read_to_string(doc).expect("the document was written");
    let rss_before = counting::peak_rss_kib().unwrap_or(0);
    let before = counting::live();
    counting::reset_peak();
    let t = Instant::now();
    let mut history = History::new();
    let classifier = ShellCommandClassifier;
    let report = match path {
        "document" => import::parse(Format::MiniSweAgent, &text)
            .and_then(|t| t.import_into(&mut history, &classifier)),
        _ => import::import(&mut history, Format::MiniSweAgent, &text, &classifier),
    }
    .expect("the transcript imports");
    let secs = t.elapsed().as_secs_f64();
    let peak = counting::peak() - before;
    let held = counting::live() - before;
    let mib = |b: usize| b as f64 / 1048576.0;
    let rss = counting::peak_rss_kib().unwrap_or(0);
    println!(
        "| {path:<9} | {:>6.1} | {:>7} | {:>6.2} | {:>6.1} | {:>8.1} | {:>6.1}x | {:>8.1} | {:>8.1} | {:>8.1} |",
        text.len() as f64 / 1e6,
        report.ids.len(),
        secs,
        text.len() as f64 / 1e6 / secs,
        mib(peak),
        peak as f64 / text.len() as f64,
        mib(held),
        rss as f64 / 1024.0,
        rss.saturating_sub(rss_before) as f64 / 1024.0,
    );
}

fn main() {
    if let (Ok(path), Ok(doc)) = (
        std::env::var("FAVUR_IMPORT_PATH"),
        std::env::var("FAVUR_IMPORT_DOC"),
    ) {
        return child(&path, &doc);
    }
    let Some(trace) = trace() else {
        println!("no trace found (set FAVUR_IMPORT_TRACE): nothing measured");
        return;
    };
    let mb: usize = std::env::var("FAVUR_IMPORT_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let text = std::fs::read_to_string(&trace).expect("the trace is readable");
    let doc = transcript(&text, mb);
    let file = std::env::temp_dir().join(format!("favur-import-{}.json", std::process::id()));
    std::fs::write(&file, &doc).expect("the document is written");
    println!("trace: {}", trace.display());
    println!(
        "| path | MB | entries | s | MB/s | peak MiB | peak / doc | held MiB | peak RSS MiB | RSS growth MiB |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let me = std::env::current_exe().expect("the bench knows its path");
    for path in ["document", "stream"] {
        let status = Command::new(&me)
            .env("FAVUR_IMPORT_PATH", path)
            .env("FAVUR_IMPORT_DOC", &file)
            .status();
        if !status.is_ok_and(|s| s.success()) {
            println!("| {path} | failed |");
        }
    }
    let _ = std::fs::remove_file(&file);
}
