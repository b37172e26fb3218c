//! Journals written by favur-context 0.1.0 keep opening: `fixtures/journal-0.1.0.jsonl`
//! was written by that release (see `fixtures/README.md`), together with its full history
//! as JSON and its OpenAI render; today's code must open it to the same history, view and
//! render, and go on appending to it.

use std::num::NonZeroU8;
use std::path::PathBuf;

use favur_context::journal::JournaledHistory;
use favur_context::render::render_openai;
use favur_context::render::validate::validate_openai;
use favur_context::{Compactor, EntryId, History, Policy, Store, fuzzy};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn a_journal_written_by_0_1_0_opens_to_the_same_history() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.jsonl");
    std::fs::copy(fixture("journal-0.1.0.jsonl"), &path).unwrap();
    let expected = History::from_json(
        &std::fs::read_to_string(fixture("journal-0.1.0.history.json")).unwrap(),
    )
    .unwrap();
    let rendered: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("journal-0.1.0.openai.json")).unwrap(),
    )
    .unwrap();

    let mut h = JournaledHistory::open(&path).unwrap();
    assert!(h.report().is_clean());
    assert!(!h.report().created);
    let got = h.history();
    assert_eq!((got.len(), got.compactions().len()), (50, 3));
    assert_eq!(got.next_id(), expected.next_id());
    assert_eq!(got.view(), expected.view());
    assert_eq!(got.pinned(), expected.pinned());
    assert_eq!(got.compactions(), expected.compactions());
    assert_eq!(got.usage_tokens(), expected.usage_tokens());
    for e in expected.entries() {
        assert_eq!(&*got.recall(e.id()).unwrap(), e, "entry {}", e.id());
    }
    // The same messages are sent; what compacted forms say may have changed since 0.1.0
    // (a result dropped with its call staying is a placeholder now, not the original).
    let now = render_openai(got);
    validate_openai(&now).unwrap();
    assert_eq!(
        now.as_array().map(Vec::len),
        rendered.as_array().map(Vec::len)
    );
    for (a, b) in now
        .as_array()
        .unwrap()
        .iter()
        .zip(rendered.as_array().unwrap())
    {
        assert_eq!(a["role"], b["role"]);
    }
    // Memory bounded by the view, as for a journal written today.
    assert_eq!(got.entries().len(), got.view().len() + got.pinned().len());

    // It goes on: appends and the compactor's records land after the old ones.
    let id = h.append(fuzzy!(user: "written by today's code")).unwrap();
    assert_eq!(id, EntryId(50));
    let mut c = Compactor::new(Policy::for_window(2_000).unwrap());
    c.compact_at(&mut h, NonZeroU8::MIN).unwrap();
    // An old journal holds no request overhead: it opens with 0, and records one.
    assert_eq!(h.history().request_overhead_tokens(), 0);
    h.set_request_overhead_tokens(120).unwrap();
    let view = h.history().view().clone();
    drop(h);
    let h = JournaledHistory::open(&path).unwrap();
    assert!(h.report().is_clean());
    assert_eq!(h.history().view(), &view);
    assert_eq!(h.history().request_overhead_tokens(), 120);
    assert_eq!(
        h.history().recall(id).unwrap().message().text(),
        "written by today's code"
    );
}
