//! Resume is a first-class step: setup happens once, the calls a kill left unanswered are
//! listed, and a reopened journal behaves exactly like one that never stopped.

mod common;

use common::Ls;
use favur_context::journal::{JournaledHistory, OpenOptions};
use favur_context::render::{render_anthropic, render_openai};
use favur_context::store::NewEntry;
use favur_context::{
    Compactor, EntryId, History, Policy, Store, ToolCall, forgettable, fuzzy, strict,
};
use serde_json::json;

fn setup() -> Vec<NewEntry> {
    vec![
        NewEntry::pinned(strict!(system: "You are a careful coding agent.")),
        NewEntry::appended(strict!(user: "Make the parser tests pass.")),
    ]
}

#[test]
fn setup_runs_once_across_three_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.jsonl");
    let mut created = Vec::new();
    for run in 0..3 {
        let mut h = OpenOptions::new().open_or_create(&path, setup).unwrap();
        created.push(h.report().created);
        h.append(fuzzy!(assistant: "run {run}: working")).unwrap();
    }
    assert_eq!(created, [true, false, false]);
    let h = JournaledHistory::open(&path).unwrap();
    assert_eq!(h.history().pinned(), &[EntryId(0)], "one system prompt");
    assert_eq!(
        common::texts(h.history()),
        [
            "You are a careful coding agent.",
            "Make the parser tests pass.",
            "run 0: working",
            "run 1: working",
            "run 2: working"
        ]
    );
}

#[test]
fn a_setup_cut_short_leaves_a_journal_that_is_still_new() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.jsonl");
    drop(OpenOptions::new().open_or_create(&path, setup).unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    let header = text.lines().next().unwrap().len() as u64 + 1;
    // The setup is one batch line: killed in the middle of it, the file ends torn.
    assert_eq!(text.lines().count(), 2);
    assert!(text.lines().nth(1).unwrap().starts_with("{\"batch\":["));
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(header + 40).unwrap();
    drop(file);
    let h = OpenOptions::new().open_or_create(&path, setup).unwrap();
    assert!(h.report().created);
    assert!(h.report().torn_tail.is_some());
    assert_eq!(h.history().pinned().len(), 1);
    assert_eq!(h.history().len(), 2);
    // A setup that fails to write leaves no half setup either: see journal_failures.rs.
}

#[test]
fn the_calls_a_kill_left_unanswered_are_listed_after_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.jsonl");
    let calls = {
        let mut h = OpenOptions::new().open_or_create(&path, setup).unwrap();
        // An old call that was answered, then a turn with three calls, one answered.
        h.append(fuzzy!(tool_call: "c0", "ls", json!({}))).unwrap();
        h.run_tool(&Ls, &ToolCall::new("c0", "ls", "{}")).unwrap();
        h.append(fuzzy!(assistant: "Now three at once.")).unwrap();
        let calls = h
            .append(fuzzy!(tool_calls: [("c1", "ls", json!({})), ("c2", "ls", json!({"path": "src"})), ("c3", "cat", json!({"path": "a.rs"}))]))
            .unwrap();
        h.run_tool(&Ls, &ToolCall::new("c1", "ls", "{}")).unwrap();
        calls
        // killed here: dropped without answering c2 and c3
    };
    let mut h = OpenOptions::new().open_or_create(&path, setup).unwrap();
    assert!(!h.report().created);
    let pending: Vec<(EntryId, String, String)> = h
        .history()
        .pending_calls()
        .into_iter()
        .map(|(id, c)| (id, c.id, c.name))
        .collect();
    assert_eq!(
        pending,
        [
            (calls, "c2".to_owned(), "ls".to_owned()),
            (calls, "c3".to_owned(), "cat".to_owned())
        ]
    );
    // Answer them (run again, or say it was interrupted): nothing is pending any more.
    for (_, call) in h.history().pending_calls() {
        h.append(
            forgettable!(tool_error(call.id.clone()): "interrupted by a restart; call it again if needed"),
        )
        .unwrap();
    }
    assert!(h.history().pending_calls().is_empty());
    // A new turn after a user message: earlier calls are not in flight any more.
    h.append(strict!(user: "carry on")).unwrap();
    h.append(fuzzy!(tool_call: "c9", "ls", json!({}))).unwrap();
    let pending = h.history().pending_calls();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].1.id, "c9");
}

/// One step of a scripted agent run: what it appends before the next request.
fn step(h: &mut impl Store, i: usize) {
    let call = format!("c{i}");
    h.append(fuzzy!(tool_call: call.clone(), "ls", json!({"i": i})))
        .unwrap();
    h.run_tool(&Ls, &ToolCall::new(call, "ls", "{}")).unwrap();
    if i % 5 == 4 {
        h.append(strict!(user: "directive {i}: keep going"))
            .unwrap();
    }
    h.append(fuzzy!(assistant: "step {i} done")).unwrap();
}

#[test]
fn a_reopened_journal_behaves_like_one_that_never_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let steady = dir.path().join("steady.jsonl");
    let restarted = dir.path().join("restarted.jsonl");
    let policy = || Policy::for_window(6_000).unwrap();
    let (mut a_compactor, mut b_compactor) = (Compactor::new(policy()), Compactor::new(policy()));
    let mut memory = History::new();
    let mut m_compactor = Compactor::new(policy());
    memory.record(setup()).unwrap();
    let mut a = OpenOptions::new().open_or_create(&steady, setup).unwrap();
    let mut b = Some(
        OpenOptions::new()
            .open_or_create(&restarted, setup)
            .unwrap(),
    );
    let mut compacted = 0;
    for i in 0..120 {
        // The second journal is closed and reopened every few steps (a restart of the
        // store; the compactor object carries on: a compactor that derives its state from
        // `history.compactions()` alone is a separate change).
        if i % 7 == 3 {
            drop(b.take());
            b = Some(
                OpenOptions::new()
                    .open_or_create(&restarted, setup)
                    .unwrap(),
            );
        }
        let b = b.as_mut().unwrap();
        step(&mut a, i);
        step(b, i);
        step(&mut memory, i);
        let da = a_compactor.prepare(&mut a).unwrap();
        let db = b_compactor.prepare(b).unwrap();
        let dm = m_compactor.prepare(&mut memory).unwrap();
        compacted += usize::from(da.compacted());
        assert_eq!(da, db, "step {i}: another decision after a restart");
        assert_eq!(da, dm, "step {i}: the journal decided unlike memory");
        let (ha, hb) = (a.history(), b.history());
        assert_eq!(ha.next_id(), hb.next_id(), "step {i}");
        assert_eq!(ha.view(), hb.view(), "step {i}");
        assert_eq!(ha.view(), memory.view(), "step {i}");
        assert_eq!(ha.compactions(), hb.compactions(), "step {i}");
        assert_eq!(render_openai(ha), render_openai(hb), "step {i}");
        assert_eq!(render_openai(ha), render_openai(&memory), "step {i}");
        assert_eq!(
            render_anthropic(ha).to_value(),
            render_anthropic(hb).to_value(),
            "step {i}"
        );
        assert_eq!(ha.pending_calls(), hb.pending_calls());
    }
    assert!(compacted >= 3, "only {compacted} compactions: a weak test");
    // Every original, in both journals, equals memory's.
    let b = b.unwrap();
    for id in (0..memory.len() as u64).map(EntryId) {
        let m = memory.recall(id).unwrap();
        assert_eq!(*a.history().recall(id).unwrap(), *m);
        assert_eq!(*b.history().recall(id).unwrap(), *m);
    }
}
