//! Failure in the middle of recording leaves memory and the file agreeing: a panic (a
//! summarizer or token counter that panics, caught with `catch_unwind`) changes nothing;
//! an I/O error (injected with `OpenOptions::faults`) either cuts the file back and
//! changes nothing, or poisons the journal; a batch is in the file whole or not at all,
//! as seen after reopening.

use std::num::NonZeroU8;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use favur_context::compact::{PrepareError, SummarizeError, Summarizer, SummaryRequest};
use favur_context::journal::{Durability, Faults, JournalError, JournaledHistory, OpenOptions};
use favur_context::store::NewEntry;
use favur_context::tokens::TokenCounter;
use favur_context::{Compactor, EntryId, Policy, Store, forgettable, fuzzy, strict};

/// Counts like the heuristic counter, but panics on any text containing `BOOM`.
struct Fragile;

impl TokenCounter for Fragile {
    fn count_text(&self, text: &str) -> u32 {
        assert!(!text.contains("BOOM"), "the counter panicked");
        favur_context::tokens::HeuristicCounter.count_text(text)
    }
}

/// A summarizer that panics.
struct Panicking;

impl Summarizer for Panicking {
    fn summarize(&self, _: &SummaryRequest<'_>) -> Result<String, SummarizeError> {
        panic!("the summarizer panicked")
    }
}

/// A journal with a pinned prompt and enough forgettable listings to be worth compacting.
fn filled(path: &Path, options: &OpenOptions) -> JournaledHistory {
    let mut h = options.open(path).unwrap();
    h.pin(strict!(system: "You are a coding agent.")).unwrap();
    h.append(strict!(user: "Fix the parser.")).unwrap();
    for i in 0..20 {
        let id = format!("c{i}");
        h.append(fuzzy!(tool_call: id.clone(), "ls", serde_json::json!({})))
            .unwrap();
        h.append(forgettable!(tool_result(id): "{}", "src/file.rs\n".repeat(40)))
            .unwrap();
    }
    h.append(fuzzy!(assistant: "listed")).unwrap();
    h
}

/// A filled journal at `path`, reopened with the faults `faults` makes of its length;
/// returns it and that length.
/// [`reopened_with_faults`] with room for `room` more bytes in the file.
fn with_room(path: &Path, room: u64, fail_truncate: bool) -> (JournaledHistory, u64) {
    reopened_with_faults(path, OpenOptions::new(), |len| Faults {
        file_limit: Some(len + room),
        fail_truncate,
        ..Faults::default()
    })
}

/// A filled journal at `path` with room for a few of 400 more entries, not for all of
/// them (the truncate that would cut a partial write back fails if `fail_truncate`);
/// returns it, the file's length, the next id and the batch of those 400 entries.
fn batch_too_big(
    path: &Path,
    fail_truncate: bool,
) -> (JournaledHistory, u64, EntryId, Vec<NewEntry>) {
    let (h, len) = with_room(path, 2_000, fail_truncate);
    let next = h.history().next_id();
    let batch = (0..400)
        .map(|i| NewEntry::appended(fuzzy!(user: "batched entry {i}")))
        .collect();
    (h, len, next, batch)
}

fn reopened_with_faults(
    path: &Path,
    options: OpenOptions,
    faults: impl FnOnce(u64) -> Faults,
) -> (JournaledHistory, u64) {
    drop(filled(path, &OpenOptions::new()));
    let len = file_len(path);
    (options.faults(faults(len)).open(path).unwrap(), len)
}

/// Closes `h`, reopens `path` with `options` (their counter must be the one the journal
/// was written with: its header names it) and asserts it holds exactly what `h` held in
/// memory: same ids, view, compactions, originals.
fn reopens_as(h: JournaledHistory, path: &Path, options: &OpenOptions) {
    let expected = h.history().full_copy().unwrap();
    drop(h);
    let reopened = options.open(path).unwrap();
    assert!(reopened.report().is_clean(), "{:?}", reopened.report());
    let got = reopened.history().full_copy().unwrap();
    assert_eq!(got.next_id(), expected.next_id());
    assert_eq!(got.view(), expected.view());
    assert_eq!(got.compactions(), expected.compactions());
    assert_eq!(got.entries(), expected.entries());
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

#[test]
fn a_panicking_token_counter_on_append_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.jsonl");
    let options = OpenOptions::new().counter(Fragile);
    let mut h = filled(&path, &options);
    let (next, len) = (h.history().next_id(), file_len(&path));
    let caught = catch_unwind(AssertUnwindSafe(|| h.append(fuzzy!(user: "BOOM"))));
    assert!(caught.is_err(), "the counter did not panic");
    assert_eq!(h.history().next_id(), next);
    assert_eq!(file_len(&path), len);
    // Also inside a batch: nothing of it is recorded.
    let caught = catch_unwind(AssertUnwindSafe(|| {
        h.record(vec![
            NewEntry::appended(fuzzy!(user: "fine")),
            NewEntry::appended(fuzzy!(user: "BOOM")),
        ])
    }));
    assert!(caught.is_err());
    assert_eq!(h.history().next_id(), next);
    assert_eq!(file_len(&path), len);
    // The journal goes on: the next append gets the next id, no gap in the file.
    assert!(!h.is_poisoned());
    assert_eq!(h.append(fuzzy!(user: "after")).unwrap(), next);
    reopens_as(h, &path, &options);
}

#[test]
fn a_panicking_summarizer_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.jsonl");
    let mut h = filled(&path, &OpenOptions::new());
    let before = h.history().full_copy().unwrap();
    let len = file_len(&path);
    // A window where tier 1 (summarize) is due, not tier 2.
    let window = h.history().usage_tokens() * 100 / 7;
    let mut compactor = Compactor::with_summarizer(Policy::for_window(window).unwrap(), Panicking);
    assert_eq!(compactor.due(h.history()), NonZeroU8::new(1));
    let caught = catch_unwind(AssertUnwindSafe(|| compactor.prepare(&mut h)));
    assert!(caught.is_err(), "the summarizer did not panic");
    assert_eq!(h.history().view(), before.view());
    assert!(h.history().compactions().is_empty());
    assert_eq!(file_len(&path), len);
    assert!(!h.is_poisoned());
    let id = h.append(fuzzy!(user: "after")).unwrap();
    assert_eq!(id, before.next_id());
    // The same journal compacts once the summarizer works.
    let mut working = Compactor::new(Policy::for_window(window).unwrap());
    let done = working.prepare(&mut h).unwrap();
    assert!(!done.report.unwrap().summaries.is_empty());
    reopens_as(h, &path, &OpenOptions::new());
}

#[test]
fn a_token_counter_panicking_on_a_summary_changes_nothing() {
    // The engine counts each summary it writes; a counter that panics there leaves the
    // journal as it was.
    struct NoSummaries;
    impl TokenCounter for NoSummaries {
        fn count_text(&self, text: &str) -> u32 {
            assert!(!text.contains("<context-summary"), "the counter panicked");
            favur_context::tokens::HeuristicCounter.count_text(text)
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.jsonl");
    let mut h = filled(&path, &OpenOptions::new().counter(NoSummaries));
    let before = h.history().full_copy().unwrap();
    let mut compactor = Compactor::new(Policy::for_window(4_000).unwrap());
    let caught = catch_unwind(AssertUnwindSafe(|| {
        compactor.compact_at(&mut h, NonZeroU8::MIN)
    }));
    assert!(caught.is_err(), "the counter did not panic");
    assert_eq!(h.history().view(), before.view());
    assert_eq!(h.history().next_id(), before.next_id());
    assert!(!h.is_poisoned());
    h.append(fuzzy!(user: "after")).unwrap();
    reopens_as(h, &path, &OpenOptions::new().counter(NoSummaries));
}

#[test]
fn a_batch_that_runs_out_of_space_is_cut_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.jsonl");
    let (mut h, len, next, batch) = batch_too_big(&path, false);
    let err = h.record(batch).unwrap_err();
    assert!(
        matches!(
            err,
            JournalError::Io {
                action: "append to",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("h.jsonl"), "{err}");
    // The state before the call, in memory and on disk; the journal goes on.
    assert_eq!(h.history().next_id(), next);
    assert_eq!(file_len(&path), len);
    assert!(!h.is_poisoned());
    assert_eq!(h.append(fuzzy!(user: "small")).unwrap(), next);
    drop(h);
    let h = JournaledHistory::open(&path).unwrap();
    assert!(h.report().is_clean());
    assert_eq!(h.history().next_id(), EntryId(next.0 + 1));
    assert_eq!(h.history().recall(next).unwrap().message().text(), "small");
}

#[test]
fn a_batch_that_cannot_be_cut_back_poisons_and_is_gone_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.jsonl");
    let (mut h, len, next, batch) = batch_too_big(&path, true);
    assert!(matches!(h.record(batch), Err(JournalError::Io { .. })));
    // Part of the batch is in the file: the journal takes no more writes.
    assert!(file_len(&path) > len);
    assert!(h.is_poisoned());
    assert_eq!(h.history().next_id(), next);
    let err = h.append(fuzzy!(user: "refused")).unwrap_err();
    assert!(matches!(err, JournalError::Poisoned { .. }), "{err}");
    let mut c = Compactor::new(Policy::for_window(4_000).unwrap());
    assert!(matches!(
        c.prepare(&mut h),
        Err(PrepareError::Store(JournalError::Poisoned { .. }))
    ));
    drop(h);
    // Reopening cuts the partial batch (one torn line): none of its 400 entries.
    let h = JournaledHistory::open(&path).unwrap();
    assert_eq!(
        h.report().torn_tail.as_ref().map(|t| t.offset),
        Some(len),
        "{:?}",
        h.report()
    );
    assert_eq!(h.history().next_id(), next);
    assert_eq!(file_len(&path), len);
}

#[test]
fn a_failed_sync_takes_the_record_back_and_poisons() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.jsonl");
    let options = OpenOptions::new().durability(Durability::SyncEach);
    let (mut h, len) = reopened_with_faults(&path, options, |_| Faults {
        fail_sync: true,
        ..Faults::default()
    });
    let next = h.history().next_id();
    let err = h.append(fuzzy!(user: "not durable")).unwrap_err();
    assert!(
        matches!(err, JournalError::Io { action: "sync", .. }),
        "{err}"
    );
    assert!(h.is_poisoned());
    assert_eq!(h.history().next_id(), next);
    assert_eq!(file_len(&path), len);
    drop(h);
    let h = JournaledHistory::open(&path).unwrap();
    assert!(h.report().is_clean());
    assert_eq!(h.history().next_id(), next);
}

#[test]
fn a_compaction_that_cannot_be_written_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.jsonl");
    let (mut h, len) = with_room(&path, 100, false);
    let before = h.history().full_copy().unwrap();
    let held = h.history().entries().len();
    let mut c = Compactor::new(Policy::for_window(4_000).unwrap());
    let err = c.prepare(&mut h).unwrap_err();
    assert!(
        matches!(err, PrepareError::Store(JournalError::Io { .. })),
        "{err}"
    );
    // Nothing changed: same view, nothing evicted, no compaction, no report.
    assert_eq!(h.history().view(), before.view());
    assert_eq!(h.history().entries().len(), held);
    assert!(h.history().compactions().is_empty());
    assert!(c.last_report().is_none());
    assert!(!h.is_poisoned());
    assert_eq!(file_len(&path), len);
    drop(h);
    // With room on the disk again, the same compaction goes through.
    let mut h = JournaledHistory::open(&path).unwrap();
    assert!(c.prepare(&mut h).unwrap().compacted());
    reopens_as(h, &path, &OpenOptions::new());
}
