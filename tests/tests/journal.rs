//! The journaled history: resume with the same history and view, recall of originals that
//! left the view (from memory or from the file), the writer lock, durability settings and
//! the recall tool.

mod common;

use std::num::NonZeroU8;

use common::{Ls, reform};
use favur_context::compact::{Compaction, Edit};
use favur_context::journal::{Durability, JournalError, JournaledHistory, OpenOptions};
use favur_context::message::{Arguments, CallSite, EntryKind};
use favur_context::render::Form;
use favur_context::store::RecallError;
use favur_context::tokens::TokenCounter;
use favur_context::tools::RecallTool;
use favur_context::{
    Entry, EntryId, History, Message, Retention, Store, ToolCall, forgettable, fuzzy, strict,
};

fn summary(h: &History, replaces: Vec<EntryId>, text: &str) -> Entry {
    Entry::new(
        h.next_id(),
        Retention::Fuzzy,
        2,
        CallSite::new("compactor", 1, 1),
        EntryKind::Summary { replaces },
        Message::assistant(text),
    )
}

/// Whether the original of `id` is held in memory.
fn held(h: &JournaledHistory, id: EntryId) -> bool {
    h.history().entries().iter().any(|e| e.id() == id)
}

/// Builds a history with every kind of record: pinned, appended, tool results, and
/// compactions that summarize, drop and reform.
/// A new journal `h.jsonl` with `options`, in a temporary folder that lives as long as
/// the returned guard.
fn open_new(options: OpenOptions) -> (tempfile::TempDir, std::path::PathBuf, JournaledHistory) {
    common::new_journal("h.jsonl", options)
}

fn populate(h: &mut JournaledHistory) -> Vec<EntryId> {
    let mut ids = vec![h.pin(strict!(system: "You are a coding agent.")).unwrap()];
    ids.push(h.append(strict!(user: "Fix the parser")).unwrap());
    ids.push(
        h.append(fuzzy!(tool_call: "c1", "ls", serde_json::json!({})))
            .unwrap(),
    );
    ids.push(h.run_tool(&Ls, &ToolCall::new("c1", "ls", "{}")).unwrap());
    ids.push(
        h.append_tool_result(&Ls, "c2", Err("denied".into()))
            .unwrap(),
    );
    ids.push(h.append(forgettable!(assistant: "looking")).unwrap());
    ids.push(h.append(fuzzy!(user: "a file view")).unwrap());
    let s = summary(h.history(), vec![ids[4], ids[5]], "ls was denied; looked");
    h.apply(Compaction {
        tier: NonZeroU8::new(2).unwrap(),
        edits: vec![
            Edit::Summarize { summary: s.into() },
            Edit::Drop { id: ids[6] },
            reform(ids[3], Form::Placeholder { summary: None }),
        ],
        usage_after: None,
    })
    .unwrap();
    ids.push(h.append(fuzzy!(assistant: "after the compaction")).unwrap());
    ids
}

#[test]
fn reopening_rebuilds_the_same_history_and_view() {
    let (_dir, path, mut h) = open_new(OpenOptions::new().framing_tokens(3));
    populate(&mut h);
    let before = h.history().full_copy().unwrap();
    let (view, pinned, usage, next) = (
        h.history().view().clone(),
        h.history().pinned().to_vec(),
        h.history().usage_tokens(),
        h.history().next_id(),
    );
    drop(h);

    let h = JournaledHistory::open(&path).unwrap();
    assert!(h.report().is_clean());
    assert!(!h.report().created);
    assert_eq!(h.report().records, 9);
    assert_eq!(h.history().view(), &view);
    assert_eq!(h.history().pinned(), &pinned[..]);
    assert_eq!(h.history().usage_tokens(), usage);
    assert_eq!(h.history().next_id(), next);
    assert_eq!(h.history().framing_tokens(), 3);
    assert_eq!(h.history().compactions(), before.compactions());
    let after = h.history().full_copy().unwrap();
    assert_eq!(after.entries(), before.entries());
    // Call sites survive: the pin was classified in populate().
    assert_eq!(after.entries()[0].site().file(), file!());
}

#[test]
fn journal_and_json_replays_agree() {
    let (_dir, path, mut h) = open_new(OpenOptions::new());
    populate(&mut h);
    let from_json = History::from_json(&h.history().full_copy().unwrap().to_json()).unwrap();
    assert_eq!(from_json.view(), h.history().view());
    let (from_reader, report) = History::from_journal(std::fs::File::open(&path).unwrap()).unwrap();
    assert!(report.is_clean());
    assert_eq!(from_reader.entries(), from_json.entries());
    assert_eq!(from_reader.view(), h.history().view());
}

#[test]
fn originals_leave_memory_with_the_view_and_are_recalled_from_the_file() {
    let (_dir, path, mut h) = open_new(OpenOptions::new());
    let ids = populate(&mut h);
    let summary_id = EntryId(7);
    // Held: pinned + view items (including the reformed #3 and the summary).
    assert_eq!(
        h.history().entries().len(),
        h.history().view().len() + h.history().pinned().len()
    );
    assert!(!held(&h, ids[4]), "summarized original evicted");
    assert!(!held(&h, ids[6]), "dropped original evicted");
    assert!(held(&h, ids[3]), "reformed entry is still in the view");
    assert_eq!(h.history().len(), 9);
    for (id, text) in [
        (ids[5], "looking"),
        (ids[6], "a file view"),
        (ids[1], "Fix the parser"),
    ] {
        assert_eq!(h.history().recall(id).unwrap().message().text(), text);
    }
    let denied = h.history().recall(ids[4]).unwrap();
    let result = denied.message().tool_results().next().unwrap();
    assert_eq!((result.content.as_str(), result.is_error), ("denied", true));
    assert_eq!(denied.retention(), Retention::Forgettable);
    assert_eq!(
        h.history().recall(summary_id).unwrap().message().text(),
        "ls was denied; looked"
    );
    // Not in memory: recall read them back from the file.
    assert!(h.history().entries().iter().all(|e| e.id() != ids[4]));

    // Evicted stay evicted after a reopen, and recall still reads them back.
    drop(h);
    let mut h = JournaledHistory::open(&path).unwrap();
    assert!(!held(&h, ids[4]));
    assert_eq!(
        h.history().recall(ids[6]).unwrap().message().text(),
        "a file view"
    );
    // A summary that leaves the view is recalled from its compaction record.
    common::drop_at(&mut h, 3, summary_id);
    assert!(!held(&h, summary_id));
    let s = h.history().recall(summary_id).unwrap();
    assert_eq!(
        s.kind(),
        &EntryKind::Summary {
            replaces: vec![ids[4], ids[5]]
        }
    );
    assert!(matches!(
        h.history().recall(EntryId(999)),
        Err(RecallError::UnknownId {
            id: EntryId(999),
            next: EntryId(9)
        })
    ));
}

#[test]
fn keep_originals_holds_everything() {
    let (_dir, path, mut h) = open_new(OpenOptions::new().keep_originals(true));
    populate(&mut h);
    assert_eq!(h.history().entries().len(), h.history().len());
    assert!(h.history().recall(EntryId(6)).is_ok());
    drop(h);
    let h = OpenOptions::new().keep_originals(true).open(&path).unwrap();
    assert_eq!(h.history().entries().len(), h.history().len());
    let evicting = {
        drop(h);
        JournaledHistory::open(&path).unwrap()
    };
    assert!(evicting.history().entries().len() < evicting.history().len());
}

#[test]
fn a_second_writer_is_refused_naming_the_file() {
    let (_dir, path, mut first) = common::new_journal("locked.jsonl", OpenOptions::new());
    first.append(fuzzy!(user: "mine")).unwrap();
    let err = JournaledHistory::open(&path).unwrap_err();
    assert!(matches!(&err, JournalError::Locked { path: p } if p == &path));
    assert!(err.to_string().contains("locked.jsonl"), "{err}");
    assert!(
        err.to_string().contains("locked by another writer"),
        "{err}"
    );
    // Readers are not writers: inspecting the file works while it is locked.
    let (copy, _) = History::from_journal(std::fs::File::open(&path).unwrap()).unwrap();
    assert_eq!(copy.len(), 1);
    // The lock goes with the history.
    drop(first);
    let second = JournaledHistory::open(&path).unwrap();
    assert_eq!(second.history().len(), 1);
}

#[test]
fn every_durability_setting_records_the_same() {
    for durability in [
        Durability::Flush,
        Durability::SyncEvery(0),
        Durability::SyncEvery(3),
        Durability::SyncEach,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.jsonl");
        let mut h = OpenOptions::new()
            .durability(durability)
            .open(&path)
            .unwrap();
        assert_eq!(h.durability(), durability);
        let ids = populate(&mut h);
        h.sync().unwrap();
        let view = h.history().view().clone();
        drop(h);
        let h = JournaledHistory::open(&path).unwrap();
        assert_eq!(h.history().view(), &view, "{durability:?}");
        assert_eq!(
            h.history().recall(ids[6]).unwrap().message().text(),
            "a file view"
        );
    }
}

#[test]
fn a_compaction_that_does_not_apply_writes_nothing() {
    let (_dir, path, mut h) = open_new(OpenOptions::new());
    let id = h.append(fuzzy!(user: "x")).unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    let err = h
        .apply(Compaction {
            tier: NonZeroU8::MIN,
            edits: vec![Edit::Drop { id }, Edit::Drop { id }],
            usage_after: None,
        })
        .unwrap_err();
    assert!(matches!(
        err,
        JournalError::Record {
            source: favur_context::store::RecordError::Compaction(
                favur_context::compact::ApplyError::Conflict { .. }
            ),
            ..
        }
    ));
    assert!(err.to_string().contains("h.jsonl"), "{err}");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    assert_eq!(h.history().view().len(), 1);
    assert!(h.history().compactions().is_empty());
}

#[test]
fn counter_option_counts_new_appends() {
    struct Bytes;
    impl TokenCounter for Bytes {
        fn count_text(&self, t: &str) -> u32 {
            t.len() as u32
        }
    }
    let (_dir, path, mut h) = open_new(OpenOptions::new().counter(Bytes));
    let id = h.append(fuzzy!(user: "abcdefgh")).unwrap();
    assert_eq!(h.history().recall(id).unwrap().tokens(), 8);
    drop(h);
    // Counts are recorded, not recounted, on reopening with the same counter (the header
    // names it; another counter is refused, see `reopening_with_another_counter_is_refused`).
    let h = OpenOptions::new().counter(Bytes).open(&path).unwrap();
    assert_eq!(h.history().recall(id).unwrap().tokens(), 8);
}

#[test]
fn the_record_format_is_one_json_object_a_line() {
    let (_dir, path, mut h) = open_new(OpenOptions::new());
    let id = h.append(fuzzy!(user: "hi")).unwrap();
    common::drop_at(&mut h, 1, id);
    drop(h);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0],
        serde_json::json!({"journal": {"format": 1, "framing_tokens": 4, "counter": "heuristic/v1"}})
    );
    assert_eq!(lines[1]["entry"]["id"], 0);
    assert_eq!(lines[1]["entry"]["retention"], "fuzzy");
    assert_eq!(lines[1]["entry"]["message"]["parts"][0]["text"], "hi");
    assert_eq!(
        lines[2],
        serde_json::json!({"compaction": {"tier": 1, "edits": [{"drop": {"id": 0}}]}})
    );
    assert!(text.ends_with('\n'));
}

#[test]
fn recall_tool_answers_from_the_journal() {
    let (_dir, _, mut h) = open_new(OpenOptions::new());
    let ids = populate(&mut h);

    // Declared to the model.
    let def = RecallTool.definition().to_openai();
    assert_eq!(def["type"], "function");
    assert_eq!(def["function"]["name"], "recall");
    assert_eq!(
        def["function"]["parameters"]["properties"]["id"]["type"],
        "integer"
    );

    // The model asks for the dropped tool error #4 by id; the agent picks the class.
    let call = ToolCall::new("c9", "recall", serde_json::json!({ "id": ids[4].0 }));
    let answer = RecallTool.respond(h.history(), &call, Retention::Fuzzy);
    assert_eq!(answer.retention(), Retention::Fuzzy);
    let id = h.append(answer).unwrap();
    let entry = h.history().recall(id).unwrap();
    assert_eq!(entry.retention(), Retention::Fuzzy);
    let result = entry.message().tool_results().next().unwrap();
    assert_eq!(result.call_id, "c9");
    assert!(!result.is_error);
    assert_eq!(
        result.content,
        "entry #4 (tool, forgettable)\n[tool error for c2]\ndenied"
    );

    // Summaries and ids given as strings.
    let text = RecallTool
        .handle(h.history(), &Arguments::parse(r##"{"id": "#7"}"##))
        .unwrap();
    assert_eq!(
        text,
        "entry #7 (assistant, fuzzy, summary of #4, #5)\nls was denied; looked"
    );
    let text = RecallTool
        .handle(h.history(), &Arguments::parse(r#"{"id": 2}"#))
        .unwrap();
    assert_eq!(text, "entry #2 (assistant, fuzzy)\n[tool call c1: ls {}]");

    // Errors become error results the model can read.
    for (args, expected) in [
        (r#"{"id": 400}"#, "no entry #400 (ids run from #0 to #9)"),
        (
            r#"{"id": 1.5}"#,
            "invalid arguments: `id` must be a non-negative integer, got 1.5",
        ),
        (
            r#"{"ident": 1}"#,
            "invalid arguments: no `id` in {\"ident\":1}; expected {\"id\": <integer>}",
        ),
        (
            "{id",
            "invalid arguments: not valid JSON: \"{id\"; expected {\"id\": <integer>}",
        ),
    ] {
        let answer = RecallTool.respond(
            h.history(),
            &ToolCall::new("c", "recall", args),
            Retention::Forgettable,
        );
        let result = answer.message().tool_results().next().unwrap().clone();
        assert!(result.is_error, "{args}");
        assert_eq!(result.content, expected);
    }
}

#[test]
fn recall_reports_a_journal_changed_under_it() {
    let (_dir, path, mut h) = open_new(OpenOptions::new());
    let a = h.append(fuzzy!(user: "aaaa")).unwrap();
    common::drop_at(&mut h, 1, a);
    // Someone rewrites the file behind the writer's back (same length, other bytes).
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"id\":0", "\"id\":7");
    std::fs::write(&path, text).unwrap();
    assert!(matches!(
        h.history().recall(a),
        Err(RecallError::Corrupt { id, .. }) if id == a
    ));
    // Truncated behind its back: an I/O error naming the offset, not a panic.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(10)
        .unwrap();
    assert!(matches!(h.history().recall(a), Err(RecallError::Io { .. })));
}

#[test]
fn the_compaction_engine_records_into_a_journal_like_into_any_store() {
    use favur_context::{Compactor, Policy};
    let (_dir, path, mut h) = open_new(OpenOptions::new());
    h.pin(strict!(system: "You are a coding agent.")).unwrap();
    let mut compactor = Compactor::new(Policy::for_window(2_000).unwrap());
    let mut reports = 0;
    for i in 0..300 {
        h.append(strict!(user: "step {i}: fix the parser")).unwrap();
        h.append(
            fuzzy!(tool_call: format!("c{i}"), "cat", serde_json::json!({"path": "src/parse.rs"})),
        )
        .unwrap();
        h.append(forgettable!(tool_result(format!("c{i}")): "{}", "fn parse() {} ".repeat(20)))
            .unwrap();
        h.append(fuzzy!(assistant: "looked at step {i}")).unwrap();
        if compactor.compact(&mut h).unwrap().is_some() {
            reports += 1;
        }
    }
    assert!(reports > 0, "the engine never compacted");
    assert_eq!(h.history().compactions().len(), reports);
    // Memory bounded by the view, and every original recallable.
    assert_eq!(
        h.history().entries().len(),
        h.history().view().len() + h.history().pinned().len()
    );
    assert!(h.history().entries().len() < h.history().len() / 2);
    for id in (0..h.history().len() as u64).map(EntryId) {
        h.history().recall(id).unwrap();
    }
    let text = h
        .history()
        .recall(EntryId(3))
        .unwrap()
        .message()
        .tool_results()
        .next()
        .unwrap()
        .content
        .clone();
    assert!(text.starts_with("fn parse() {}"));
    let view = h.history().view().clone();
    let full = h.history().full_copy().unwrap();
    drop(h);

    let h = JournaledHistory::open(&path).unwrap();
    assert!(h.report().is_clean());
    assert_eq!(h.history().view(), &view);
    assert_eq!(h.history().compactions(), full.compactions());
    assert_eq!(h.history().full_copy().unwrap().entries(), full.entries());
    // The same view as the engine gives on a plain history fed the same appends.
    let replayed = History::from_json(&full.to_json()).unwrap();
    assert_eq!(replayed.view(), &view);
}

#[test]
fn rendering_a_journaled_history_matches_rendering_the_full_one() {
    use favur_context::render::{render_anthropic, render_openai};
    let (_dir, path, mut h) = open_new(OpenOptions::new());
    h.pin(strict!(system: "You are a coding agent.")).unwrap();
    h.append(strict!(user: "list the files")).unwrap();
    let call = h
        .append(fuzzy!(tool_call: "c1", "ls", serde_json::json!({})))
        .unwrap();
    let result = h
        .append(forgettable!(tool_result("c1"): "a.rs\nb.rs"))
        .unwrap();
    h.append(fuzzy!(assistant: "two files")).unwrap();
    // The result leaves the view while its call stays: renderers point at the original.
    common::drop_at(&mut h, 1, result);
    let held: Vec<EntryId> = h.history().entries().iter().map(|e| e.id()).collect();
    assert!(!held.contains(&result), "evicted");
    assert!(held.contains(&call));
    let full = h.history().full_copy().unwrap();
    assert_eq!(render_openai(h.history()), render_openai(&full));
    assert_eq!(
        serde_json::to_value(render_anthropic(h.history()).to_value()).unwrap(),
        serde_json::to_value(render_anthropic(&full).to_value()).unwrap()
    );
    drop(h);
    let h = JournaledHistory::open(&path).unwrap();
    assert_eq!(render_openai(h.history()), render_openai(&full));
}

#[test]
fn a_copy_of_the_history_reads_back_without_holding_the_lock() {
    let (_dir, path, mut h) = open_new(OpenOptions::new());
    let ids = populate(&mut h);
    let copy = h.history().clone();
    drop(h);
    // The copy reads evicted originals back from the file...
    assert!(!copy.entries().iter().any(|e| e.id() == ids[6]));
    assert_eq!(copy.recall(ids[6]).unwrap().message().text(), "a file view");
    // ...and the journal reopens for writing while the copy is alive (on Unix).
    #[cfg(unix)]
    {
        let mut again = JournaledHistory::open(&path).unwrap();
        again.append(fuzzy!(user: "more")).unwrap();
    }
    assert_eq!(
        copy.recall(ids[1]).unwrap().message().text(),
        "Fix the parser"
    );
}

#[test]
fn reopening_with_another_counter_is_refused() {
    struct Bytes;
    impl favur_context::tokens::TokenCounter for Bytes {
        fn id(&self) -> &str {
            "bytes"
        }
        fn count_text(&self, t: &str) -> u32 {
            t.len() as u32
        }
    }
    let (_dir, path, mut h) = open_new(OpenOptions::new().counter(Bytes));
    h.append(favur_context::fuzzy!(user: "abcd")).unwrap();
    drop(h);
    let err = JournaledHistory::open(&path).unwrap_err();
    assert!(
        matches!(&err, JournalError::Counter { recorded, given, .. } if recorded == "bytes" && given == "heuristic/v1"),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("was counted with `bytes`, not `heuristic/v1`")
    );
    let h = OpenOptions::new().counter(Bytes).open(&path).unwrap();
    assert_eq!(h.history().entries()[0].tokens(), 4);
}

#[test]
fn a_checked_compaction_is_written_once_and_only_while_current() {
    let (_dir, path, mut h) = open_new(OpenOptions::new());
    let id = h.append(fuzzy!(user: "x")).unwrap();
    let compaction = common::drop_record(2, id);
    // Checked, then the history moves on: refused, and nothing is written.
    let stale = h.history().check(compaction.clone()).unwrap();
    h.append(fuzzy!(user: "y")).unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    let err = h.apply_checked(stale).unwrap_err();
    assert!(
        matches!(
            err,
            JournalError::Record {
                source: favur_context::store::RecordError::Stale,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    assert!(h.history().compactions().is_empty());
    // Checked now: written and committed, and the file replays to the same view.
    let checked = h.history().check(compaction).unwrap();
    h.apply_checked(checked).unwrap();
    assert_eq!(h.history().view().len(), 1);
    let view = h.history().view().clone();
    drop(h);
    let reopened = OpenOptions::new().open(&path).unwrap();
    assert_eq!(reopened.history().view(), &view);
    assert_eq!(reopened.history().compactions().len(), 1);
}
