//! Exact token counts (feature `tiktoken`) and the counter recorded with a history:
//! `cargo test -p favur-context-tests --features tiktoken --test tokens`.
#![cfg(feature = "tiktoken")]

mod common;

use favur_context::journal::{JournalError, JournaledHistory, OpenOptions};
use favur_context::store::CounterChange;
use favur_context::tokens::{Encoding, HeuristicCounter, TiktokenCounter, TokenCounter};
use favur_context::{History, Store, fuzzy, strict};

#[test]
fn counts_match_the_published_encodings() {
    // OpenAI's cookbook example: "tiktoken is great!" is 6 tokens in cl100k_base.
    assert_eq!(
        TiktokenCounter::cl100k().count_text("tiktoken is great!"),
        6
    );
    assert_eq!(TiktokenCounter::o200k().count_text(""), 0);
    assert_eq!(TiktokenCounter::o200k().count_text("hello world"), 2);
    // Special-token text is counted as ordinary text, never as structure.
    assert!(TiktokenCounter::o200k().count_text("<|endoftext|>") > 1);
    // JSON and logs: where the heuristic undercounts.
    let log =
        "2024-05-01T12:00:03Z ERROR [worker-7] job=4411 status=failed code=E0425\n".repeat(20);
    let exact = TiktokenCounter::o200k().count_text(&log);
    let heuristic = HeuristicCounter.count_text(&log);
    assert!(heuristic < exact, "heuristic {heuristic} vs o200k {exact}");
}

#[test]
fn model_names_map_to_encodings() {
    for (model, enc) in [
        ("gpt-4o", Some(Encoding::O200kBase)),
        ("gpt-4o-2024-08-06", Some(Encoding::O200kBase)),
        ("gpt-4.1-mini", Some(Encoding::O200kBase)),
        ("gpt-5", Some(Encoding::O200kBase)),
        ("o3-mini", Some(Encoding::O200kBase)),
        ("ft:gpt-4o-mini:acme::abc123", Some(Encoding::O200kBase)),
        ("gpt-4", Some(Encoding::Cl100kBase)),
        ("gpt-4-turbo", Some(Encoding::Cl100kBase)),
        ("gpt-3.5-turbo-0125", Some(Encoding::Cl100kBase)),
        ("text-embedding-3-small", Some(Encoding::Cl100kBase)),
        ("gpt-4otter", None),
        ("o10", None),
        ("deepseek-chat", None),
        ("gemini-3-pro", None),
        ("claude-sonnet-4-5", None),
    ] {
        assert_eq!(Encoding::for_model(model), enc, "{model}");
    }
}

#[test]
fn a_history_reopens_with_its_own_counter() {
    let mut h = History::with_counter(TiktokenCounter::o200k());
    h.append(strict!(user: "tiktoken is great!"));
    // Named in the document; from_json picks the same counter back, no silent switch.
    // Another counter named explicitly: refused, or recounted when asked.
    let json = common::reopens_with_its_counter(
        &h,
        "tiktoken/o200k_base",
        TiktokenCounter::cl100k(),
        "tiktoken/cl100k_base",
    );
    let recounted =
        History::from_json_with(&json, HeuristicCounter, CounterChange::Recount).unwrap();
    assert_eq!(
        recounted.entries()[0].tokens(),
        HeuristicCounter.count_message(h.entries()[0].message())
    );
}

#[test]
fn a_journal_records_its_counter() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.jsonl");
    let mut h = OpenOptions::new()
        .counter(TiktokenCounter::o200k())
        .open(&path)
        .unwrap();
    h.append(fuzzy!(user: "hello world")).unwrap();
    drop(h);
    let header = std::fs::read_to_string(&path).unwrap();
    assert!(
        header
            .lines()
            .next()
            .unwrap()
            .contains(r#""counter":"tiktoken/o200k_base""#)
    );
    let err = JournaledHistory::open(&path).unwrap_err();
    assert!(matches!(err, JournalError::Counter { .. }), "{err}");
    let h = OpenOptions::new()
        .counter(TiktokenCounter::o200k())
        .open(&path)
        .unwrap();
    assert_eq!(h.history().entries()[0].tokens(), 2);
}
