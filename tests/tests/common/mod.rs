//! Helpers shared by the integration tests (included with `mod common;`).
#![allow(dead_code)]

mod edits;
pub mod parts;
pub mod steps;

#[allow(unused_imports)]
pub use edits::{drop_at, drop_record};

use std::num::NonZeroU8;

use favur_context::tokens::TokenCounter;

use favur_context::compact::{Compaction, Edit};
use favur_context::message::{CallSite, EntryKind};
use favur_context::render::Form;
use favur_context::render::validate::{
    validate_anthropic, validate_anthropic_strict, validate_openai, validate_openai_strict,
    validate_responses_strict,
};
use favur_context::render::{render_anthropic, render_openai, render_responses};
use favur_context::store::{CounterChange, LoadError};
use favur_context::{Entry, EntryId, History, Message, Retention};

/// `h` reopens with its own counter (`id`, named in its document) and the same usage,
/// and `other` (`other_id`), named explicitly, is refused, not taken as the same counter:
/// `h`'s document.
pub fn reopens_with_its_counter(
    h: &History,
    id: &str,
    other: impl TokenCounter + 'static,
    other_id: &str,
) -> String {
    let json = h.to_json();
    let back = History::from_json(&json).unwrap();
    assert_eq!(back.counter().id(), id);
    assert_eq!(back.usage_tokens(), h.usage_tokens());
    let err = History::from_json_with(&json, other, CounterChange::Refuse).unwrap_err();
    assert!(
        matches!(&err, LoadError::Counter { recorded, given } if recorded == id && given == other_id),
        "{err}"
    );
    json
}

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

/// The edit that records a summary (see [`summary`]) of `replaces`, and the summary's id.
pub fn summarize(h: &History, replaces: &[EntryId], text: &str) -> (EntryId, Edit) {
    let s = summary(h, replaces, text);
    (s.id(), Edit::Summarize { summary: s.into() })
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
        tier: NonZeroU8::MIN,
        edits,
        usage_after: None,
    })
    .expect("compaction applies");
}

/// Renders both formats and checks them with the lenient validators, and with the strict
/// ones unless the history ends in calls in flight (then the Responses format too, which
/// has only a strict validator).
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
        let responses = render_responses(h);
        if let Err(e) = validate_responses_strict(&responses) {
            panic!("responses invalid (strict): {e}\n{responses:#}");
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

/// A new journal `file` in a new folder, opened with `options`: the folder (kept while it
/// lives), the journal's path and the journal.
pub fn new_journal(
    file: &str,
    options: favur_context::journal::OpenOptions,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    favur_context::journal::JournaledHistory,
) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file);
    let journal = options.open(&path).unwrap();
    (dir, path, journal)
}

/// A compactor with the built-in summarizer, for a `window` of tokens with `reserve`
/// kept for the output.
pub fn builtin_compactor(
    window: u64,
    reserve: u32,
) -> favur_context::Compactor<
    favur_context::compact::Ready<favur_context::compact::BuiltinSummarizer>,
> {
    let policy = favur_context::Policy::builder()
        .window_tokens(window)
        .reserve_output_tokens(reserve)
        .build()
        .expect("a valid policy");
    favur_context::Compactor::with_summarizer(
        policy,
        favur_context::compact::Ready(favur_context::compact::BuiltinSummarizer::default()),
    )
}

/// Runs a future to completion on this thread, polling it with a no-op waker (the
/// futures under test are woken by nothing but being polled again).
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

/// A tool whose output is forgettable: compaction drops or summarizes it first.
pub struct Ls;

#[favur_context::retention(forgettable)]
impl favur_context::tools::Tool for Ls {
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

/// A future that is pending once (waking itself) and then ready: a network call's
/// suspension point, for async code under test.
pub async fn pending_once() {
    let mut polled = false;
    std::future::poll_fn(|cx| {
        if polled {
            std::task::Poll::Ready(())
        } else {
            polled = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
    .await;
}

/// Any retention class, for property tests.
pub fn class() -> impl proptest::strategy::Strategy<Value = Retention> {
    use proptest::prelude::*;
    prop_oneof![
        Just(Retention::Forgettable),
        Just(Retention::Fuzzy),
        Just(Retention::Strict)
    ]
}

mod tool;
#[allow(unused_imports)]
pub(crate) use tool::tool;

// The traces helpers are shared with the CLI's tests (favur-context-cli/tests/common).
mod traces;
#[allow(unused_imports)]
pub use traces::{chat_messages, trace_files, traces_dir};

/// Snapshot settings for JSON with its keys sorted, whichever order serde_json keeps them
/// in (a build with a dependency that turns on serde_json's `preserve_order`, such as the
/// `rig` feature under `--all-features`, keeps them as inserted). Hold the guard for the
/// test's snapshots.
#[allow(dead_code)]
pub fn sorted_snapshots() -> insta::internals::SettingsBindDropGuard {
    let mut settings = insta::Settings::clone_current();
    settings.set_sort_maps(true);
    settings.bind_to_scope()
}

/// A compacted history for the interop tests: a system pin, `task` (the first user
/// message), parallel calls with an error result, a summary in place of one result, a
/// placeholder in place of another and a call kept without its text.
#[allow(dead_code)]
pub fn compacted_tools(task: favur_context::Classified) -> History {
    use favur_context::{forgettable, fuzzy, strict};
    use serde_json::json;
    let mut h = History::new();
    h.pin(strict!(system: "You are a coding agent."));
    h.append(task);
    let a1 = h.append(fuzzy!(tool_call: "c1", "bash", json!({"command": "ls"})));
    let r1 = h.append(forgettable!(tool_result("c1"): "src\ntests"));
    h.append(fuzzy!(tool_calls: [("c2", "bash", r#"{"command":"pytest"}"#), ("c3", "bash", r#"{"command":"cat a.py"}"#)]));
    h.append(strict!(tool_error("c2"): "1 failed"));
    let r3 = h.append(fuzzy!(tool_result("c3"): "def f(): pass"));
    h.append(fuzzy!(assistant: "Found it."));
    let (sid, s) = summarize(&h, &[r3], "a.py defines f.");
    apply(
        &mut h,
        vec![
            s,
            reform(r3, Form::Placeholder { summary: Some(sid) }),
            reform(r1, Form::Placeholder { summary: None }),
            reform(a1, Form::CallsOnly),
        ],
    );
    h
}

/// The built-in summarizer awaited run by run, each call pending once first, as an LLM
/// summarizer is (every run alone, through `AsyncSummarizer::summarize`).
pub struct RunByRun;

impl favur_context::compact::AsyncSummarizer for RunByRun {
    async fn summarize(
        &self,
        r: &favur_context::compact::SummaryRequest<'_>,
    ) -> Result<String, favur_context::compact::SummarizeError> {
        pending_once().await;
        favur_context::compact::Summarizer::summarize(
            &favur_context::compact::BuiltinSummarizer::default(),
            r,
        )
    }
}
