//! Reasoning, image and document parts: their JSON form, journals that hold them, records
//! refused when malformed, and what compaction does with them (issue 13).

mod common;

use common::parts::{assistant, document, image, kinds, result, text, thinking, tool, user};
use favur_context::compact::BuiltinSummarizer;
use favur_context::journal::JournaledHistory;
use favur_context::message::{CallSite, EntryKind, Media, Part, PartError, Provider, Reasoning};
use favur_context::render::Form;
use favur_context::store::RecordError;
use favur_context::{Entry, History, Message, Retention, Role, Store, ToolCall};

/// An assistant turn with Anthropic thinking and OpenAI reasoning, a text and a call.
fn thinking_turn(call: &str) -> Message {
    assistant([
        thinking(Reasoning::anthropic(
            "the tests live in tests/",
            "SIG-ant-123",
        )),
        thinking(Reasoning::openai(
            "rs_1",
            ["look at tests", "then run them"],
            Some("ENC-openai-456".into()),
        )),
        text("Let me look."),
        Part::ToolCall(Box::new(
            ToolCall::new(call, "ls", serde_json::json!({"path": "tests"}))
                .with_provider_id("fc_1"),
        )),
    ])
}

/// A user message with an image and a document.
fn media_turn() -> Message {
    user([
        text("what is in these?"),
        image(Media::base64("image/png", "iVBORw0KGgoAAAANSUhEUg==")),
        document(Media::url("application/pdf", "https://example.com/spec.pdf").named("spec")),
    ])
}

/// A tool result that returned a screenshot (the image follows the result it belongs to).
fn screenshot(call: &str) -> Message {
    tool([
        result(call, "took a screenshot"),
        image(Media::file("image/jpeg", "file_77")),
    ])
}

#[test]
fn existing_parts_keep_their_json_and_new_ones_are_tagged() {
    let text = serde_json::to_value(Part::Text("hi".into())).unwrap();
    assert_eq!(text, serde_json::json!({"type": "text", "text": "hi"}));
    let call =
        serde_json::to_value(Part::ToolCall(Box::new(ToolCall::new("c1", "ls", "{}")))).unwrap();
    assert_eq!(
        call,
        serde_json::json!({"type": "tool_call", "id": "c1", "name": "ls", "arguments": {"json": {}}})
    );
    let m = thinking_turn("c1");
    let json = serde_json::to_value(&m).unwrap();
    assert_eq!(json["parts"][0]["type"], "reasoning");
    assert_eq!(json["parts"][0]["signature"], "SIG-ant-123");
    assert_eq!(json["parts"][1]["provider"], "openai");
    assert_eq!(
        json["parts"][1]["text"],
        serde_json::json!(["look at tests", "then run them"])
    );
    assert_eq!(json["parts"][3]["provider_id"], "fc_1");
    let back: Message = serde_json::from_value(json).unwrap();
    assert_eq!(back, m);
    let media = serde_json::to_value(media_turn()).unwrap();
    assert_eq!(media["parts"][1]["type"], "image");
    assert_eq!(media["parts"][2]["type"], "document");
    assert_eq!(
        media["parts"][2]["source"],
        serde_json::json!({"type": "url", "url": "https://example.com/spec.pdf"})
    );
}

fn full_history() -> History {
    let mut h = History::new();
    h.append(Message::system("be brief").classify(Retention::Strict));
    h.append(media_turn().classify(Retention::Strict));
    h.append(thinking_turn("c1").classify(Retention::Fuzzy));
    h.append(screenshot("c1").classify(Retention::Forgettable));
    h.append(Message::assistant("done").classify(Retention::Fuzzy));
    h
}

#[test]
fn journals_with_the_new_parts_reopen_identically() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("parts.jsonl");
    let expected = full_history();
    {
        let mut j = JournaledHistory::open(&path).unwrap();
        for e in expected.entries() {
            j.append(e.message().clone().classify(e.retention()))
                .unwrap();
        }
    }
    let j = JournaledHistory::open(&path).unwrap();
    assert!(j.report().is_clean());
    let got = j.history();
    assert_eq!(got.len(), expected.len());
    for e in expected.entries() {
        assert_eq!(
            got.recall(e.id()).unwrap().message(),
            e.message(),
            "entry {}",
            e.id()
        );
    }
    assert_eq!(got.usage_tokens(), expected.usage_tokens());
    // A history document too.
    let doc = expected.to_json();
    let back = History::from_json(&doc).unwrap();
    assert_eq!(back.entries(), expected.entries());
}

#[test]
fn a_record_with_malformed_media_or_empty_reasoning_is_refused() {
    let mut h = History::new();
    let entry = |h: &History, m: Message| {
        Entry::new(
            h.next_id(),
            Retention::Fuzzy,
            1,
            CallSite::new("t", 1, 1),
            EntryKind::Appended,
            m,
        )
    };
    // What a record holding `m` is refused for (it must be its part).
    let problem = |h: &mut History, m: Message| {
        let e = entry(h, m);
        match h.insert(e).unwrap_err() {
            RecordError::Part { problem, .. } => problem,
            err => panic!("{err}"),
        }
    };
    let bad = Message::new(
        Role::User,
        vec![Part::Image(Box::new(Media::base64("", "AAAA")))],
    );
    assert_eq!(problem(&mut h, bad), PartError::EmptyMediaType);
    let no_url = Message::new(
        Role::User,
        vec![Part::Document(Box::new(Media::url("application/pdf", "")))],
    );
    assert_eq!(problem(&mut h, no_url), PartError::EmptySource("url"));
    let empty = Message::new(
        Role::Assistant,
        vec![Part::Reasoning(Box::new(Reasoning::new(
            Provider::Anthropic,
        )))],
    );
    let err = problem(&mut h, empty);
    assert!(matches!(err, PartError::EmptyReasoning { .. }), "{err}");
    assert!(h.is_empty());
}

#[test]
fn calls_only_keeps_reasoning_and_the_summarizer_never_copies_payloads() {
    let h = full_history();
    let turn = h.recall(favur_context::EntryId(2)).unwrap();
    let shown = Form::CallsOnly.message_for(&turn);
    assert_eq!(kinds(&shown), ["reasoning", "reasoning", "call"]);
    let entries: Vec<&Entry> = h.entries().iter().collect();
    let summary = BuiltinSummarizer::default().summarize_entries(&entries, 2_000);
    for secret in ["SIG-ant-123", "ENC-openai-456", "iVBORw0KGgo"] {
        assert!(
            !summary.contains(secret),
            "{secret} leaked into:\n{summary}"
        );
    }
    // Visible reasoning is digested; media are mentioned.
    assert!(summary.contains("[image image/png"), "{summary}");
    assert!(summary.contains("spec.pdf"), "{summary}");
}
