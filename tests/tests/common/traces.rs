//! The shared traces, for the integration tests of every crate (included by path).

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

/// A trace's `messages` as OpenAI Chat Completions messages: the exit record left out,
/// flat calls nested, each call's `arguments` as `arguments` gives them.
pub fn chat_messages(
    messages: &[serde_json::Value],
    arguments: impl Fn(&serde_json::Value) -> serde_json::Value,
) -> Vec<serde_json::Value> {
    use serde_json::{Value, json};
    messages
        .iter()
        .filter(|m| m["role"] != "exit")
        .map(|m| {
            let mut out = json!({"role": m["role"], "content": m["content"]});
            if let Some(calls) = m.get("tool_calls").and_then(Value::as_array) {
                out["tool_calls"] = calls
                    .iter()
                    .map(|c| {
                        json!({"id": c["id"], "type": "function",
                        "function": {"name": c["name"], "arguments": arguments(c)}})
                    })
                    .collect();
            }
            if let Some(id) = m.get("tool_call_id") {
                out["tool_call_id"] = id.clone();
            }
            out
        })
        .collect()
}
