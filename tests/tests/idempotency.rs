//! Idempotency keys on the in-memory history and the journal: a write retried with its
//! key is recorded once, across reopening and interchange; a key repeated in the file is
//! refused by name; journals written before keys open as they did.

mod common;

use favur_context::journal::{
    Corruption, JournalError, JournaledHistory, OpenOptions, export_journal,
};
use favur_context::store::{KeyError, NewEntry, RecordError};
use favur_context::{EntryId, History, Store, fuzzy, strict};

/// A reply and its tool result: one keyed write of two entries.
fn reply(n: u32) -> Vec<NewEntry> {
    vec![
        NewEntry::appended(fuzzy!(assistant: "reply {n}")),
        NewEntry::appended(fuzzy!(user: "after reply {n}")),
    ]
}

#[test]
fn a_keyed_write_retried_on_the_in_memory_history_is_recorded_once() {
    let mut h = History::new();
    h.pin(strict!(system: "sys"));
    let first = h.record_once("resp_1", reply(1)).unwrap();
    assert_eq!(first, EntryId(1));
    // Retried, even with other content: nothing is written, the first write's id.
    assert_eq!(h.record_once("resp_1", reply(9)).unwrap(), first);
    assert_eq!(h.len(), 3);
    assert_eq!(h.record_once("resp_2", reply(2)).unwrap(), EntryId(3));
    assert_eq!(h.len(), 5);
    // An empty key is refused: it would make every write missing its id a repeat.
    let err = h.record_once("", reply(3)).unwrap_err();
    assert_eq!(err, RecordError::Key(KeyError::Empty));
    let long = "k".repeat(favur_context::store::MAX_KEY_BYTES + 1);
    assert!(matches!(
        h.record_once(&long, reply(3)),
        Err(RecordError::Key(KeyError::TooLong { .. }))
    ));
    assert_eq!(h.len(), 5);
    // An empty batch records nothing, its key included.
    assert_eq!(h.record_once("resp_4", Vec::new()).unwrap(), EntryId(5));
    assert_eq!(h.recorded_with_key("resp_4"), None);
}

#[test]
fn a_journal_keeps_its_keys_across_reopening_and_export() {
    let (_dir, path, mut j) = common::new_journal("j.jsonl", OpenOptions::new());
    j.pin(strict!(system: "sys")).unwrap();
    let first = j.record_once("resp_1", reply(1)).unwrap();
    let single = j
        .append_once("call_7", fuzzy!(tool_result("call_7"): "ok"))
        .unwrap();
    drop(j);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text.matches(r#"{"keyed":{"key":"resp_1","entries":["#)
            .count(),
        1
    );

    let mut j = JournaledHistory::open(&path).unwrap();
    assert_eq!(j.history().recorded_with_key("resp_1"), Some(first));
    assert_eq!(j.record_once("resp_1", reply(1)).unwrap(), first);
    assert_eq!(
        j.append_once("call_7", fuzzy!(tool_result("call_7"): "ok"))
            .unwrap(),
        single
    );
    assert_eq!(j.history().len(), 4);
    let written = std::fs::read_to_string(&path).unwrap();
    assert_eq!(written, text, "a retry writes nothing");

    // Exported from the history (each entry its own record), the keys are kept.
    let mut out = Vec::new();
    export_journal(j.history(), &mut out).unwrap();
    let (back, _) = History::from_journal(&out[..]).unwrap();
    assert_eq!(back.recorded_with_key("resp_1"), Some(first));
    assert_eq!(back.recorded_with_key("call_7"), Some(single));
    assert_eq!(back.len(), 4);
}

#[test]
fn a_key_repeated_in_a_journal_is_refused_by_name() {
    let (_dir, path, mut j) = common::new_journal("j.jsonl", OpenOptions::new());
    j.append_once("resp_1", fuzzy!(assistant: "a")).unwrap();
    j.append(fuzzy!(user: "b")).unwrap();
    drop(j);
    // A hand-written copy of the keyed record (its id made the next one).
    let text = std::fs::read_to_string(&path).unwrap();
    let keyed = text
        .lines()
        .nth(1)
        .unwrap()
        .replace(r#""id":0"#, r#""id":2"#);
    std::fs::write(&path, format!("{text}{keyed}\n")).unwrap();
    let err = JournaledHistory::open(&path).unwrap_err();
    assert!(
        matches!(
            &err,
            JournalError::Corrupt {
                line: 4,
                problem: Corruption::Record(RecordError::Key(KeyError::Recorded {
                    first: EntryId(0),
                    ..
                })),
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("resp_1"), "{err}");
}

#[test]
fn a_journal_written_before_keys_opens_and_takes_keyed_writes() {
    // Written by favur-context 0.1.0 (see `fixtures/README.md`), before keys.
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/journal-0.1.0.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.jsonl");
    std::fs::copy(&fixture, &path).unwrap();
    let file = std::fs::File::open(&fixture).unwrap();
    let before = History::from_journal(file).unwrap().0.len();
    let mut j = OpenOptions::new().open(&path).unwrap();
    assert_eq!(j.history().len(), before);
    let id = j.append_once("r", fuzzy!(user: "x")).unwrap();
    assert_eq!(id, EntryId(before as u64));
    drop(j);
    let j = JournaledHistory::open(&path).unwrap();
    assert_eq!(j.history().recorded_with_key("r"), Some(id));
}
