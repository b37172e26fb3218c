//! Fuzzing the journal reader and the entry deserializer with proptest: arbitrary bytes
//! and mutated valid journals give a history or a typed error, never a panic. Bounded case
//! counts keep it well under 20 s in a debug build.

mod common;

use std::num::NonZeroU8;
use std::sync::OnceLock;

use favur_context::compact::{Compaction, Edit};
use favur_context::journal::{JournalError, JournaledHistory, OpenOptions};
use favur_context::message::{CallSite, EntryKind};
use favur_context::render::Form;
use favur_context::store::NewEntry;
use favur_context::{Entry, History, Message, Retention, Store, forgettable, fuzzy, strict};
use proptest::prelude::*;
use proptest::strategy::ValueTree;

/// A valid journal with every record type, built once.
fn valid_journal() -> &'static [u8] {
    static JOURNAL: OnceLock<Vec<u8>> = OnceLock::new();
    JOURNAL.get_or_init(|| {
        let (_dir, path, mut h) = common::new_journal("valid.jsonl", OpenOptions::new());
        h.pin(strict!(system: "be careful")).unwrap();
        let a = h.append(fuzzy!(user: "one")).unwrap();
        let b = h
            .append(fuzzy!(tool_call: "c1", "ls", serde_json::json!({"path": "."})))
            .unwrap();
        let c = h.append(forgettable!(tool_result("c1"): "a\nb")).unwrap();
        let d = h.append(strict!(assistant: "plan: é ✓")).unwrap();
        let summary = Entry::new(
            h.history().next_id(),
            Retention::Fuzzy,
            2,
            CallSite::new("fuzz", 1, 1),
            EntryKind::Summary { replaces: vec![a] },
            Message::assistant("gist"),
        );
        h.apply(Compaction {
            tier: NonZeroU8::new(2).unwrap(),
            edits: vec![
                Edit::Summarize {
                    summary: summary.into(),
                },
                Edit::Drop { id: c },
                Edit::Reform {
                    id: b,
                    form: Form::CallsOnly,
                    tokens: 1,
                },
            ],
            usage_after: None,
        })
        .unwrap();
        h.append(Message::user("x").classify(Retention::Strict))
            .unwrap();
        h.record(vec![
            NewEntry::appended(fuzzy!(user: "batch one")),
            NewEntry::pinned(strict!(system: "batch two")),
        ])
        .unwrap();
        let _ = d;
        drop(h);
        std::fs::read(&path).unwrap()
    })
}

/// Reads `bytes` as a journal: from a reader, and with salvage. Asserts the only outcomes
/// are a history or a typed error, and that what loads is consistent.
fn read_any(bytes: &[u8]) {
    for options in [
        OpenOptions::new(),
        OpenOptions::new().salvage(true).max_line_bytes(256),
    ] {
        match options.read(bytes) {
            Ok((history, report)) => {
                // Ids are dense and the view only names recorded entries.
                assert_eq!(history.entries().len(), history.len());
                for item in history.view().items() {
                    assert!(item.id < history.next_id());
                }
                if let Some(t) = report.torn_tail {
                    assert!(t.bytes > 0);
                }
                // A history that loads re-loads identically through the JSON replay.
                let again = History::from_json(&history.to_json()).unwrap();
                assert_eq!(again.view(), history.view());
            }
            Err(JournalError::Corrupt { line, offset, .. }) => {
                assert!(line >= 1);
                assert!(offset < bytes.len() as u64);
            }
            Err(JournalError::Version { found, .. }) => assert_ne!(found, 1),
            // A mutation of the counter's id in the header.
            Err(JournalError::Counter { recorded, .. }) => assert_ne!(recorded, "heuristic/v1"),
            Err(other) => panic!("unexpected error kind from a reader: {other}"),
        }
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip { at: usize, xor: u8 },
    Insert { at: usize, byte: u8 },
    Delete { at: usize, len: usize },
    Truncate { at: usize },
    DuplicateLine { line: usize },
    SwapLines { a: usize, b: usize },
    Splice { at: usize, text: String },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1u8..).prop_map(|(at, xor)| Mutation::Flip { at, xor }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Insert { at, byte }),
        (any::<usize>(), 1usize..40).prop_map(|(at, len)| Mutation::Delete { at, len }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        any::<usize>().prop_map(|line| Mutation::DuplicateLine { line }),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines { a, b }),
        (
            any::<usize>(),
            prop::sample::select(vec![
                "\"retention\":\"eternal\"",
                "\"id\":99",
                "{\"snapshot\":{}}\n",
                "{\"journal\":{\"format\":7,\"framing_tokens\":4}}\n",
                "\n",
                "\u{0}",
                "{\"compaction\":{\"tier\":1,\"edits\":[{\"drop\":{\"id\":42}}]}}\n",
                "\"kind\":\"pinned\",",
                "9999999999999999999999",
                "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
            ])
            .prop_map(str::to_owned)
        )
            .prop_map(|(at, text)| Mutation::Splice { at, text }),
    ]
}

fn mutate(bytes: &mut Vec<u8>, m: &Mutation) {
    let n = bytes.len().max(1);
    match m {
        Mutation::Flip { at, xor } => {
            if let Some(b) = bytes.get_mut(at % n) {
                *b ^= xor;
            }
        }
        Mutation::Insert { at, byte } => bytes.insert(at % (bytes.len() + 1), *byte),
        Mutation::Delete { at, len } => {
            let start = at % n;
            let end = (start + len).min(bytes.len());
            if start < end {
                bytes.drain(start..end);
            }
        }
        Mutation::Truncate { at } => bytes.truncate(at % n),
        Mutation::DuplicateLine { line } | Mutation::SwapLines { a: line, .. }
            if bytes.is_empty() =>
        {
            let _ = line;
        }
        Mutation::DuplicateLine { line } => {
            let mut lines: Vec<Vec<u8>> = bytes
                .split_inclusive(|&b| b == b'\n')
                .map(<[u8]>::to_vec)
                .collect();
            let i = line % lines.len();
            let copy = lines[i].clone();
            lines.insert(i, copy);
            *bytes = lines.concat();
        }
        Mutation::SwapLines { a, b } => {
            let mut lines: Vec<Vec<u8>> = bytes
                .split_inclusive(|&b| b == b'\n')
                .map(<[u8]>::to_vec)
                .collect();
            let len = lines.len();
            lines.swap(a % len, b % len);
            *bytes = lines.concat();
        }
        Mutation::Splice { at, text } => {
            let at = at % (bytes.len() + 1);
            bytes.splice(at..at, text.bytes());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        read_any(&bytes);
        let _ = serde_json::from_slice::<Entry>(&bytes);
    }

    #[test]
    fn arbitrary_lines_after_a_valid_header_never_panic(
        lines in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..80), 0..6)
    ) {
        let mut bytes = b"{\"journal\":{\"format\":1,\"framing_tokens\":4}}\n".to_vec();
        for l in &lines {
            bytes.extend_from_slice(l);
            bytes.push(b'\n');
        }
        read_any(&bytes);
    }

    #[test]
    fn mutated_journals_never_panic(mutations in prop::collection::vec(mutation(), 1..4)) {
        let mut bytes = valid_journal().to_vec();
        for m in &mutations {
            mutate(&mut bytes, m);
        }
        read_any(&bytes);
        // Every line on its own through the entry deserializer, too.
        for line in bytes.split(|&b| b == b'\n') {
            let _ = serde_json::from_slice::<Entry>(line);
            if let Ok(value) = serde_json::from_slice::<serde_json::Value>(line)
                && let Some(inner) = value.get("entry")
            {
                let _ = serde_json::from_value::<Entry>(inner.clone());
            }
        }
    }
}

#[test]
fn mutated_journals_through_a_real_file() {
    // The file path adds the lock, the truncation of a torn tail and salvage's move aside;
    // a deterministic sample of mutations goes through it.
    let dir = tempfile::tempdir().unwrap();
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = prop::collection::vec(mutation(), 1..4);
    for i in 0..60 {
        let mutations = strategy.new_tree(&mut runner).unwrap().current();
        let mut bytes = valid_journal().to_vec();
        for m in &mutations {
            mutate(&mut bytes, m);
        }
        let path = dir.path().join(format!("m{i}.jsonl"));
        std::fs::write(&path, &bytes).unwrap();
        match OpenOptions::new().salvage(true).open(&path) {
            Ok(mut h) => {
                // It takes appends after whatever it cut or moved aside, and reopens clean.
                let id = h.append(fuzzy!(user: "after")).unwrap();
                drop(h);
                let h = JournaledHistory::open(&path).unwrap();
                assert!(h.report().is_clean(), "{mutations:?}");
                assert_eq!(h.history().recall(id).unwrap().message().text(), "after");
            }
            // A header mutated away: not a journal, and left as it is.
            Err(JournalError::Version { .. } | JournalError::NotAJournal { .. }) => {}
            // A mutation of the counter's id in the header (as for a reader).
            Err(JournalError::Counter { recorded, .. }) => assert_ne!(recorded, "heuristic/v1"),
            Err(e) => panic!("{mutations:?}: {e}"),
        }
    }
}

#[test]
fn the_valid_journal_is_valid() {
    let (h, report) = History::from_journal(valid_journal()).unwrap();
    assert!(report.is_clean());
    assert_eq!(h.len(), 9);
    assert_eq!(h.compactions().len(), 1);
    assert_eq!(h.pinned().len(), 2);
}
