//! The one agent loop every store runs: generic over `AsyncStore`, so the journal, SQLite
//! and PostgreSQL differ only in how the store is opened. And the checks every store
//! must pass the same way.

use std::error::Error;

use favur_context::compact::{BuiltinSummarizer, Ready};
use favur_context::journal::Corruption;
use favur_context::store::{RecordError, StoreError};
use favur_context::tools::ToolSet;
use favur_context::{
    AsyncStore, Compactor, EntryId, History, Message, Policy, Retention, ToolCall, fuzzy, strict,
};
use serde_json::json;

use crate::common::Ls;

pub type BoxError = Box<dyn Error + Send + Sync>;

/// The compactor the loop uses: a small window, so that a few turns compact.
pub fn compactor() -> Compactor<Ready<BuiltinSummarizer>> {
    Compactor::with_summarizer(
        Policy::for_window(3_000).expect("a valid window"),
        Ready(BuiltinSummarizer::default()),
    )
}

/// The tools the budgeted loop declares: the recall tool.
pub fn tools() -> ToolSet {
    ToolSet::new(Retention::Strict)
        .with_recall(Retention::Fuzzy)
        .expect("one tool")
}

/// The budgeted loop's compactor: the loop's window, with an output reserve.
pub fn budgeted_compactor() -> Compactor<Ready<BuiltinSummarizer>> {
    crate::common::builtin_compactor(3_000, 60)
}

/// [`agent_loop`] with the whole request budget: the tools' definitions as the request
/// overhead (set through the store, as on every start), and an output reserve.
pub async fn budgeted_loop<S: AsyncStore>(
    store: &mut S,
    from: usize,
    turns: usize,
) -> Result<(), BoxError> {
    store.budget_tools(&tools()).await?;
    agent_loop_with(store, from, turns, budgeted_compactor()).await
}

/// `turns` turns of an agent: a user message, an assistant tool call, the tool's result,
/// an assistant answer, and the compactor before each model request; turn numbers go on
/// from `from`. Sets the store up first if it is new.
pub async fn agent_loop<S: AsyncStore>(
    store: &mut S,
    from: usize,
    turns: usize,
) -> Result<(), BoxError> {
    agent_loop_with(store, from, turns, compactor()).await
}

/// [`agent_loop`] with `compactor`.
async fn agent_loop_with<S: AsyncStore>(
    store: &mut S,
    from: usize,
    turns: usize,
    mut compactor: Compactor<Ready<BuiltinSummarizer>>,
) -> Result<(), BoxError> {
    if store.history().is_empty() {
        store
            .pin(strict!(system: "You are a careful coding agent."))
            .await?;
        store
            .append(strict!(user: "Make the parser tests pass."))
            .await?;
    }
    for turn in from..from + turns {
        store
            .append(fuzzy!(user: "turn {turn}: what is in the tree now?"))
            .await?;
        let call = ToolCall::new(format!("call-{turn}"), "ls", json!({}));
        store
            .append(Message::assistant_calls(vec![call.clone()]).classify(Retention::Fuzzy))
            .await?;
        store.run_tool(&Ls, &call).await?;
        compactor.prepare_async(store).await?;
        store
            .append(fuzzy!(assistant: "turn {turn}: the tree has a store module."))
            .await?;
    }
    Ok(())
}

/// Every original of `h`, by id, as text.
pub fn originals(h: &History) -> Vec<String> {
    (0..h.next_id().0)
        .map(|i| match h.recall(EntryId(i)) {
            Ok(e) => serde_json::to_string(&*e).expect("an entry serializes"),
            Err(e) => format!("error: {e}"),
        })
        .collect()
}

/// Asserts that `a` and `b` are the same history: view, ids, compactions, and the
/// original of every id.
pub fn assert_same(a: &History, b: &History, what: &str) {
    assert_eq!(a.view(), b.view(), "{what}: view");
    assert_eq!(a.next_id(), b.next_id(), "{what}: next id");
    assert_eq!(a.compactions(), b.compactions(), "{what}: compactions");
    assert_eq!(a.pinned(), b.pinned(), "{what}: pinned");
    assert_eq!(a.usage_tokens(), b.usage_tokens(), "{what}: usage");
    assert_eq!(originals(a), originals(b), "{what}: originals");
}

/// Appends `m0`, `m1`, `m2`: the session each damage case starts from.
pub async fn three_rows<S: AsyncStore>(store: &mut S) {
    for i in 0..3 {
        store.append(fuzzy!(user: "m{i}")).await.expect("an append");
    }
}

/// A check of the error that opening a damaged session gives.
pub type Expected = fn(&StoreError) -> bool;

/// Each way to damage a session of [`three_rows`] (`$S` is its name) as SQL that both
/// SQLite and PostgreSQL run, and the typed error opening it must give; the last damages
/// the whole database.
pub fn damages() -> Vec<(&'static str, Expected)> {
    vec![
        (
            "UPDATE favur_records SET body = '{\"entry\":' WHERE session = '$S' AND seq = 1",
            |e| {
                matches!(
                    e,
                    StoreError::Corrupt {
                        seq: 1,
                        problem: Corruption::InvalidJson { .. },
                        ..
                    }
                )
            },
        ),
        (
            "UPDATE favur_records SET body = replace(body, '\"fuzzy\"', '\"eternal\"') WHERE session = '$S' AND seq = 2",
            |e| {
                matches!(
                    e,
                    StoreError::Corrupt {
                        seq: 2,
                        problem: Corruption::UnknownClass { .. },
                        ..
                    }
                )
            },
        ),
        (
            "DELETE FROM favur_records WHERE session = '$S' AND seq = 1",
            |e| {
                matches!(
                    e,
                    StoreError::Sequence {
                        expected: 1,
                        found: 2,
                        ..
                    }
                )
            },
        ),
        (
            "UPDATE favur_records SET first_id = 7 WHERE session = '$S' AND seq = 2",
            |e| {
                matches!(
                    e,
                    StoreError::Corrupt {
                        seq: 2,
                        problem: Corruption::Record(RecordError::IdOrder { .. }),
                        ..
                    }
                )
            },
        ),
        (
            "UPDATE favur_sessions SET counter = 'tiktoken/o200k' WHERE session = '$S'",
            |e| matches!(e, StoreError::Counter { recorded, .. } if recorded == "tiktoken/o200k"),
        ),
        ("UPDATE favur_schema_version SET version = 99", |e| {
            matches!(
                e,
                StoreError::Schema {
                    found: 99,
                    supported: 2
                }
            )
        }),
    ]
}

/// Asserts that opening `session` after damage `sql` gave the error `expected` accepts,
/// naming the session.
pub fn assert_refused(session: &str, sql: &str, expected: Expected, got: &StoreError) {
    assert!(expected(got), "{sql}: {got}");
    if !matches!(got, StoreError::Schema { .. }) {
        assert!(
            got.to_string().contains(&format!("session `{session}`")),
            "{got}"
        );
    }
}

/// Runs `f` to completion on a fresh current-thread runtime.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(f)
}
