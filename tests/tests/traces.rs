//! Real data: every trace in `shared/traces` (or `$FAVUR_TRACES`) is imported with the
//! example shell classifier and replayed step by step with compaction before each
//! assistant turn at several window sizes; every step is rendered in both formats and
//! every request validated. Skips, with a visible message, where the folder is absent.

mod common;

use std::path::Path;

use common::{chat_messages, render_valid, trace_files, traces_dir};
use favur_context::compact::CompactionReport;
use favur_context::import::shell::ShellCommandClassifier;
use favur_context::import::{self, Format, ImportedMessage};
use favur_context::render::render_openai;
use favur_context::render::validate::{validate_anthropic, validate_openai};
use favur_context::{Compactor, History, Policy, Role};
use serde_json::Value;

const WINDOWS: [u64; 3] = [8_000, 32_000, 128_000];

fn load(path: &Path) -> (Value, Vec<ImportedMessage>) {
    let text = std::fs::read_to_string(path).expect("readable trace");
    let doc: Value = serde_json::from_str(&text).expect("trace is JSON");
    let transcript = import::parse(Format::MiniSweAgent, &text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let classified = transcript
        .classify(&ShellCommandClassifier)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (doc, classified)
}

/// Replays `messages` as a live agent would: append each message, and before each
/// assistant turn (a model request) compact and check the request. Renders and
/// validates after every step.
fn replay(messages: &[ImportedMessage], window: u64) -> (History, Vec<CompactionReport>, usize) {
    let mut h = History::new();
    let mut compactor = Compactor::new(Policy::for_window(window).expect("valid window"));
    let mut reports = Vec::new();
    let mut requests = 0;
    for m in messages {
        if m.classified.message().role == Role::Assistant {
            if let Some(r) = compactor.compact(&mut h).unwrap() {
                assert!(
                    r.usage_after <= r.usage_before,
                    "a tier {} compaction grew usage from {} to {}",
                    r.tier,
                    r.usage_before,
                    r.usage_after
                );
                reports.push(r);
            }
            // The request that produced this assistant turn: complete, so strict.
            render_valid(&h, true);
            requests += 1;
        }
        if m.pin {
            h.pin(m.classified.clone());
        } else {
            h.append(m.classified.clone());
        }
        // After every step (once there is a conversation); the tail may hold calls in
        // flight.
        if !h.view().is_empty() {
            render_valid(&h, false);
        }
    }
    (h, reports, requests)
}

#[test]
fn every_trace_replays_to_valid_requests_at_every_window() {
    let Some(dir) = traces_dir() else { return };
    let files = trace_files(&dir);
    assert!(!files.is_empty(), "no traces under {}", dir.display());
    let mut by_rule: std::collections::BTreeMap<String, usize> = Default::default();
    for path in &files {
        let (_, messages) = load(path);
        for m in &messages {
            *by_rule
                .entry(m.classified.site().file().to_owned())
                .or_default() += 1;
        }
        for window in WINDOWS {
            let (h, reports, requests) = replay(&messages, window);
            assert!(requests > 10, "{}: too few requests", path.display());
            if window == WINDOWS[0] {
                assert!(
                    !reports.is_empty(),
                    "{}: nothing compacted at {window}",
                    path.display()
                );
                assert!(h.compactions().len() >= reports.len());
            }
        }
    }
    eprintln!("entries by classifier rule: {by_rule:?}");
    for rule in [
        "listing",
        "run",
        "file-view",
        "other",
        "assistant",
        "task",
        "system",
    ] {
        assert!(
            by_rule.keys().any(|k| k.ends_with(&format!("/{rule}"))),
            "no entry classified by rule {rule}"
        );
    }
}

/// The trace's messages as OpenAI Chat Completions messages (exit record and
/// `prompt_tokens` left out; flat calls nested; arguments re-serialized compactly, the
/// documented normalisation).
fn as_openai(doc: &Value) -> Vec<Value> {
    let messages = doc["messages"].as_array().expect("messages");
    chat_messages(messages, |c| {
        let args: Value =
            serde_json::from_str(c["arguments"].as_str().expect("string")).expect("JSON arguments");
        Value::String(args.to_string())
    })
}

fn normalised(v: &Value) -> String {
    // Object key order is not significant in the comparison; compare canonical forms.
    let mut v = v.clone();
    fn sort(v: &mut Value) {
        match v {
            Value::Object(o) => {
                let mut entries: Vec<(String, Value)> = std::mem::take(o).into_iter().collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                for (k, mut x) in entries {
                    sort(&mut x);
                    o.insert(k, x);
                }
            }
            Value::Array(a) => a.iter_mut().for_each(sort),
            _ => {}
        }
    }
    sort(&mut v);
    v.to_string()
}

#[test]
fn uncompacted_imports_render_the_original_messages() {
    let Some(dir) = traces_dir() else { return };
    let mut tool_calling = 0;
    for path in trace_files(&dir) {
        let (doc, _) = load(&path);
        let expected = Value::Array(as_openai(&doc));
        // As a mini-swe-agent trajectory.
        let mut h = History::new();
        let text = std::fs::read_to_string(&path).expect("readable");
        import::import(&mut h, Format::MiniSweAgent, &text, &ShellCommandClassifier)
            .expect("imports");
        let rendered = render_openai(&h);
        assert_eq!(
            normalised(&rendered),
            normalised(&expected),
            "{}",
            path.display()
        );
        validate_openai(&rendered).expect("valid");
        validate_anthropic(&favur_context::render::render_anthropic(&h).to_value()).expect("valid");
        // And, for the tool-calling runs, as plain OpenAI chat messages.
        if doc["messages"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"))
        {
            tool_calling += 1;
            let mut h = History::new();
            import::import(
                &mut h,
                Format::OpenAi,
                &expected.to_string(),
                &ShellCommandClassifier,
            )
            .expect("imports as OpenAI");
            assert_eq!(
                normalised(&render_openai(&h)),
                normalised(&expected),
                "{}",
                path.display()
            );
        }
    }
    assert!(tool_calling > 0, "no OpenAI-format trace found");
}

#[test]
fn compaction_reports_of_one_trace() {
    let Some(dir) = traces_dir() else { return };
    let path = dir.join("mini-swe-agent-deepseek-toolcalls/pvlib__pvlib-python-1154.json");
    assert!(path.is_file(), "{} missing from the traces", path.display());
    let (_, messages) = load(&path);
    let (_, reports, requests) = replay(&messages, 16_000);
    assert!(!reports.is_empty());
    let mut text = format!("{requests} requests, {} compactions\n", reports.len());
    for (i, r) in reports.iter().enumerate() {
        text.push_str(&format!("#{i} summaries {:?}\n{r}\n", r.summaries));
    }
    insta::assert_snapshot!("pvlib_1154_reports_16k", text);
}

/// Every request of `messages` replayed with compaction before each assistant turn,
/// rendered in both formats; with `reload_every`, the history is saved
/// ([`History::to_json`]) and reloaded with a fresh engine every so many messages.
fn requests(messages: &[ImportedMessage], window: u64, reload_every: Option<usize>) -> Vec<String> {
    // Every reclaim worth it: then only the engine's state says a tier was covered.
    let policy = Policy::builder()
        .window_tokens(window)
        .min_reclaim(0.0)
        .build()
        .expect("valid policy");
    let mut h = History::new();
    let mut compactor = Compactor::new(policy.clone());
    let mut out = Vec::new();
    for (k, m) in messages.iter().enumerate() {
        if reload_every.is_some_and(|n| k % n == n - 1) {
            h = History::from_json(&h.to_json()).expect("reloads");
            compactor = Compactor::new(policy.clone());
        }
        if m.classified.message().role == Role::Assistant {
            compactor.compact(&mut h).expect("in memory");
            out.push(render_openai(&h).to_string());
            out.push(
                favur_context::render::render_anthropic(&h)
                    .to_value()
                    .to_string(),
            );
        }
        if m.pin {
            h.pin(m.classified.clone());
        } else {
            h.append(m.classified.clone());
        }
    }
    out
}

#[test]
fn a_history_reopened_at_any_step_compacts_as_an_uninterrupted_one() {
    let Some(dir) = traces_dir() else { return };
    let mut compared = 0;
    for path in trace_files(&dir).iter().step_by(3) {
        let (_, messages) = load(path);
        let straight = requests(&messages, 32_000, None);
        for every in [5, 13] {
            let reopened = requests(&messages, 32_000, Some(every));
            assert_eq!(straight.len(), reopened.len());
            for (i, (a, b)) in straight.iter().zip(&reopened).enumerate() {
                assert_eq!(
                    a,
                    b,
                    "{}: request {} differs (reload every {every})",
                    path.display(),
                    i / 2
                );
            }
            compared += reopened.len();
        }
    }
    assert!(compared > 100, "only {compared} requests compared");
}

#[test]
fn the_builtin_summaries_of_a_compaction_are_the_same_read_together_or_run_by_run() {
    use favur_context::compact::{BuiltinSummarizer, Ready};
    let Some(dir) = traces_dir() else { return };
    let (mut compactions, mut shared) = (0, 0);
    for path in trace_files(&dir).iter() {
        let (_, messages) = load(path);
        let policy = || Policy::for_window(32_000).expect("valid window");
        // The engine's synchronous path reads all runs together (`summarize_runs`), the
        // asynchronous one over `Ready` too (`summarize_runs_now`); run by run is each
        // summary alone.
        let mut together = (History::new(), Compactor::new(policy()));
        let mut ready = (
            History::new(),
            Compactor::with_summarizer(policy(), Ready(BuiltinSummarizer::default())),
        );
        let mut alone = (
            History::new(),
            Compactor::with_summarizer(policy(), common::RunByRun),
        );
        for m in &messages {
            if m.classified.message().role == Role::Assistant {
                let a = together.1.prepare(&mut together.0).unwrap().report;
                let b = common::block_on(ready.1.prepare_async(&mut ready.0))
                    .unwrap()
                    .report;
                let c = common::block_on(alone.1.prepare_async(&mut alone.0))
                    .unwrap()
                    .report;
                assert_eq!(a, b, "{}", path.display());
                assert_eq!(a, c, "{}", path.display());
                if let Some(r) = a {
                    compactions += 1;
                    shared += usize::from(r.summarizer_calls > 1);
                }
            }
            for h in [&mut together.0, &mut ready.0, &mut alone.0] {
                if m.pin {
                    h.pin(m.classified.clone());
                } else {
                    h.append(m.classified.clone());
                }
            }
        }
        assert_eq!(
            together.0.entries(),
            alone.0.entries(),
            "{}",
            path.display()
        );
        assert_eq!(
            together.0.entries(),
            ready.0.entries(),
            "{}",
            path.display()
        );
    }
    assert!(
        shared > 0,
        "no compaction of {compactions} summarized more than one run"
    );
}
