//! The compactor's async futures are `Send` when the store and the summarizer are, so an
//! agent can hand them to a multi-threaded executor: checked at compile time with the
//! bounds of `tokio::spawn`, and run on another thread.

mod common;

use std::future::Future;

use favur_context::compact::{AsyncSummarizer, SummarizeError, SummaryRequest};
use favur_context::journal::{JournaledHistory, OpenOptions};
use favur_context::{Compactor, History, Policy, Store, forgettable, fuzzy, strict};

/// The bounds of `tokio::spawn`, on a plain thread.
fn spawn<F>(future: F) -> std::thread::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    std::thread::spawn(move || common::block_on(future))
}

/// An LLM stand-in: pending once per call, as a network call would be.
struct Llm;

impl AsyncSummarizer for Llm {
    async fn summarize(&self, r: &SummaryRequest<'_>) -> Result<String, SummarizeError> {
        common::pending_once().await;
        Ok(format!("the model's gist of {} entries", r.entries.len()))
    }
}

fn fill(h: &mut impl Store) {
    h.pin(strict!(system: "You are a coding agent.")).unwrap();
    for i in 0..30 {
        h.append(forgettable!(tool_result(format!("c{i}")): "{}", "a.rs\n".repeat(30)))
            .unwrap();
        h.append(fuzzy!(assistant: "seen {i}")).unwrap();
    }
}

#[test]
fn prepare_async_on_a_journal_runs_as_a_spawned_task() {
    let (_dir, path, mut journal) = common::new_journal("h.jsonl", OpenOptions::new());
    fill(&mut journal);
    let window = journal.history().usage_tokens() * 100 / 7;
    let mut compactor = Compactor::with_summarizer(Policy::for_window(window).unwrap(), Llm);
    let task = spawn(async move {
        let done = compactor
            .prepare_async(&mut journal)
            .await
            .map(|p| p.report);
        (done, journal)
    });
    let (done, journal) = task.join().unwrap();
    let report = done.unwrap().expect("tier 1 was due");
    assert_eq!(report.tier.get(), 1);
    assert!(report.summarizer_calls > 0);
    assert!(report.fallbacks.is_empty());
    let view = journal.history().view().clone();
    drop(journal);
    assert_eq!(
        JournaledHistory::open(&path).unwrap().history().view(),
        &view
    );
}

#[test]
fn compact_async_on_a_history_runs_as_a_spawned_task() {
    let mut history = History::new();
    fill(&mut history);
    let window = history.usage_tokens() * 100 / 7;
    let mut compactor = Compactor::with_summarizer(Policy::for_window(window).unwrap(), Llm);
    let task = spawn(async move {
        let report = compactor.compact_async(&mut history).await;
        (report, history)
    });
    let (report, history) = task.join().unwrap();
    assert_eq!(
        report.unwrap().unwrap().summaries.len(),
        history.compactions()[0]
            .edits
            .iter()
            .filter(|e| matches!(e, favur_context::compact::Edit::Summarize { .. }))
            .count()
    );
}
