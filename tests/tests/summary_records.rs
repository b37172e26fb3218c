//! The compaction records a history keeps name their summaries by id: a journaled
//! history that evicted a summary still serializes, exports and re-applies its records
//! in full (the summaries read back from the journal).

mod common;

use std::num::NonZeroU8;

use favur_context::compact::{Compaction, Edit};
use favur_context::journal::JournaledHistory;
use favur_context::{History, Store, fuzzy};

#[test]
fn an_evicted_summary_is_read_back_for_its_record() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut j = JournaledHistory::open(dir.path().join("h.jsonl")).expect("open");
    let a = j.append(fuzzy!(user: "first exchange")).unwrap();
    let b = j.append(fuzzy!(assistant: "second exchange")).unwrap();
    let (s, gist) = common::summarize(j.history(), &[a, b], "the gist of both");
    j.apply(Compaction {
        tier: NonZeroU8::MIN,
        edits: vec![gist],
        usage_after: None,
    })
    .unwrap();
    j.append(fuzzy!(user: "later")).unwrap();
    // The summary leaves the view: evicted from memory, kept in the journal.
    j.apply(Compaction {
        tier: NonZeroU8::new(2).unwrap(),
        edits: vec![Edit::Drop { id: s }],
        usage_after: None,
    })
    .unwrap();
    let h = j.history();
    assert!(h.entries().iter().all(|e| e.id() != s));
    let Edit::Summarize { summary } = &h.compactions()[0].edits[0] else {
        panic!("the first record summarizes");
    };
    assert_eq!(summary.id(), s);
    assert!(summary.entry().is_none());
    let full = h.compaction_in_full(&h.compactions()[0]).unwrap();
    let Edit::Summarize { summary } = &full.edits[0] else {
        panic!("the first record summarizes");
    };
    assert_eq!(
        summary.entry().unwrap().message().text(),
        "the gist of both"
    );
    // A full copy serializes and loads back to the same history.
    let copy = h.full_copy().unwrap();
    let back = History::from_json(&copy.to_json()).unwrap();
    assert_eq!(back.view(), h.view());
    assert_eq!(back.compactions(), h.compactions());
    assert_eq!(back.recall(s).unwrap().message().text(), "the gist of both");
    // And the journal reopens to the same history.
    drop(j);
    let reopened = JournaledHistory::open(dir.path().join("h.jsonl")).expect("reopen");
    assert_eq!(reopened.history().view(), back.view());
    assert_eq!(reopened.history().compactions(), back.compactions());
}
