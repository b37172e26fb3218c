//! Serde: a history round-trips (entries, call sites, extensions untouched, invalid tool
//! arguments kept raw), and a document with an entry that has no class, or an unknown one,
//! does not load at all, with an error naming the entry.

mod common;

use favur_context::{
    EntryId, History, Message, Retention, forgettable, fuzzy, message::Arguments,
    store::CounterChange, store::LoadError, strict,
};
use serde_json::{Value, json};

fn sample() -> History {
    sample_on(common::history())
}

/// Loads a document counted with `common::Words`.
fn load(json: &str) -> Result<History, LoadError> {
    History::from_json_with(json, common::Words, CounterChange::Refuse)
}

fn sample_on(mut h: History) -> History {
    h.pin(strict!(system: "You are a coding agent."));
    h.append(strict!(message: Message::user("Fix the lexer")
        .with_extension("name", json!("alice"))
        .with_extension("cache_control", json!({"type": "ephemeral", "ttl": [5, "m"]}))
        .with_extension("z_vendor", json!(null))));
    h.append(fuzzy!(tool_calls: [
        ("call_1", "read", json!({"path": "src/lexer.rs"})),
        ("call_2", "bash", "{\"command\": \"cargo te"),
    ]));
    h.append(fuzzy!(tool_result("call_1"): "fn lex() {{}}"));
    h.append(forgettable!(tool_error("call_2"): "invalid arguments"));
    h
}

#[test]
fn round_trip() {
    let h = sample();
    let json = h.to_json();
    let back = load(&json).expect("a serialized history loads");

    assert_eq!(back.entries(), h.entries());
    assert_eq!(back.pinned(), h.pinned());
    assert_eq!(back.usage_tokens(), h.usage_tokens());
    assert_eq!(
        back.to_json(),
        json,
        "serializing again gives the same document"
    );

    // The extensions map comes back untouched: same keys, same values, in the order of
    // serde_json's map (sorted, or as inserted where an application turns on
    // serde_json's `preserve_order`; the library does not force either).
    let ext = &back.entries()[1].message().extensions;
    assert_eq!(ext, &h.entries()[1].message().extensions);
    let mut keys: Vec<&str> = ext.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["cache_control", "name", "z_vendor"]);
    assert_eq!(
        ext["cache_control"],
        json!({"type": "ephemeral", "ttl": [5, "m"]})
    );
    assert_eq!(ext["z_vendor"], Value::Null);

    // Invalid JSON arguments are kept verbatim.
    let calls: Vec<_> = back.entries()[2].message().tool_calls().cloned().collect();
    assert_eq!(
        calls[0].arguments,
        Arguments::Json(json!({"path": "src/lexer.rs"}))
    );
    assert_eq!(
        calls[1].arguments,
        Arguments::Invalid("{\"command\": \"cargo te".into())
    );

    // The call sites survive (owned file names once read back).
    assert_eq!(back.entries()[0].site(), h.entries()[0].site());
    assert_eq!(back.entries()[0].site().file(), "tests/tests/serde.rs");

    let pretty: Value = serde_json::from_str(&json).unwrap();
    let _sorted = common::sorted_snapshots();
    insta::assert_json_snapshot!(pretty);
}

#[test]
fn serde_traits_round_trip() {
    // Deserialize names no counter: the document's own (a library counter) is used.
    let h = sample_on(History::new());
    let value = serde_json::to_value(&h).unwrap();
    let back: History = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(back.entries(), h.entries());
    assert_eq!(serde_json::to_value(&back).unwrap(), value);
}

/// The sample document with entry `index` edited by `edit`.
fn edited(index: usize, edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> String {
    let mut doc: Value = serde_json::from_str(&sample().to_json()).unwrap();
    let entry = doc["entries"][index].as_object_mut().unwrap();
    edit(entry);
    doc.to_string()
}

#[test]
fn entry_without_class_does_not_load() {
    let doc = edited(2, |e| {
        e.remove("retention");
    });
    let err = load(&doc).expect_err("an entry without a class must not load");
    match &err {
        LoadError::Entry { index, id, problem } => {
            assert_eq!((*index, *id), (2, Some(EntryId(2))));
            assert!(problem.contains("missing field `retention`"), "{problem}");
        }
        other => panic!("unexpected error: {other:?}"),
    }
    // Through the `Deserialize` impl too: nothing is returned, so nothing is half-loaded.
    let via_serde = serde_json::from_str::<History>(&doc).unwrap_err();
    assert!(
        via_serde.to_string().starts_with("entry 2 (id #2)"),
        "{via_serde}"
    );
    insta::assert_snapshot!(err.to_string(), @"entry 2 (id #2): missing field `retention`");
}

#[test]
fn unknown_class_does_not_load() {
    let doc = edited(3, |e| {
        e.insert("retention".into(), json!("important"));
    });
    let err = load(&doc).expect_err("an unknown class must not load");
    match &err {
        LoadError::Entry { index, id, problem } => {
            assert_eq!((*index, *id), (3, Some(EntryId(3))));
            assert!(problem.contains("unknown variant `important`"), "{problem}");
            for class in Retention::ALL {
                assert!(problem.contains(class.as_str()), "{problem}");
            }
        }
        other => panic!("unexpected error: {other:?}"),
    }
    assert!(serde_json::from_str::<History>(&doc).is_err());
    insta::assert_snapshot!(err.to_string());
}

#[test]
fn null_class_does_not_load() {
    let doc = edited(0, |e| {
        e.insert("retention".into(), Value::Null);
    });
    let err = load(&doc).unwrap_err();
    assert!(
        matches!(
            err,
            LoadError::Entry {
                index: 0,
                id: Some(EntryId(0)),
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn the_first_bad_entry_is_named_even_after_good_ones() {
    // Entry 4 is broken; entries 0..4 are fine but nothing is loaded.
    let doc = edited(4, |e| {
        e.insert("retention".into(), json!("Strict"));
    });
    let err = load(&doc).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("entry 4 (id #4): unknown variant `Strict`"),
        "{err}"
    );
}

#[test]
fn an_entry_serializes_its_class_as_a_word() {
    let h = sample();
    let entry = serde_json::to_value(&h.entries()[1]).unwrap();
    assert_eq!(entry["retention"], "strict");
    assert_eq!(entry["site"]["file"], "tests/tests/serde.rs");
}

#[test]
fn the_counter_is_recorded_and_checked() {
    let json = sample().to_json();
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert!(doc["counter"].as_str().unwrap().ends_with("Words"));
    // Reopening without naming the counter does not switch to the heuristic silently.
    let err = History::from_json(&json).unwrap_err();
    assert!(
        matches!(&err, LoadError::Counter { given, .. } if given == "heuristic/v1"),
        "{err}"
    );
    assert!(serde_json::from_str::<History>(&json).is_err());
    // Recounting with the heuristic gives the heuristic's counts.
    let back = History::from_json_with(
        &json,
        favur_context::tokens::HeuristicCounter,
        CounterChange::Recount,
    )
    .unwrap();
    let fresh = sample_on(History::new());
    assert_eq!(back.usage_tokens(), fresh.usage_tokens());
    assert_ne!(back.usage_tokens(), sample().usage_tokens());
    assert_eq!(back.counter().id(), "heuristic/v1");
    // A heuristic document reopens with the heuristic.
    assert_eq!(
        History::from_json(&fresh.to_json()).unwrap().counter().id(),
        "heuristic/v1"
    );
}
