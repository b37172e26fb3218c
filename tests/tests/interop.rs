//! The async-openai interop: a real request value of that crate built from a compacted
//! view. Run with `cargo test -p favur-context-tests --features async-openai --test interop`.
#![cfg(feature = "async-openai")]

mod common;

use favur_context::import::IncomingMessage;
use favur_context::interop::async_openai::types::{
    ChatCompletionRequestMessage, CreateChatCompletionRequest, CreateChatCompletionRequestArgs,
};
use favur_context::interop::async_openai::{import_messages, request_messages};
use favur_context::render::render_openai;
use favur_context::{History, Message, Retention};
use serde_json::{Value, json};

fn without_null_content(mut v: Value) -> Value {
    for m in v.as_array_mut().into_iter().flatten() {
        if m.get("content") == Some(&Value::Null) {
            m.as_object_mut().map(|o| o.remove("content"));
        }
    }
    v
}

fn history() -> History {
    common::compacted_tools(
        Message::user("Fix the test.")
            .with_extension("name", json!("ana"))
            .classify(Retention::Strict),
    )
}

#[test]
fn a_compacted_view_builds_a_real_async_openai_request() {
    let h = history();
    let messages = request_messages(&h).unwrap();
    assert_eq!(messages.len(), 9);
    assert!(matches!(
        messages[0],
        ChatCompletionRequestMessage::System(_)
    ));
    assert!(matches!(messages[3], ChatCompletionRequestMessage::Tool(_)));
    let request: CreateChatCompletionRequest = CreateChatCompletionRequestArgs::default()
        .model("gpt-4.1")
        .messages(messages)
        .build()
        .unwrap();
    // The request serializes to the same messages as the JSON renderer.
    let sent = serde_json::to_value(&request).unwrap();
    assert_eq!(sent["model"], "gpt-4.1");
    assert_eq!(sent["messages"], without_null_content(render_openai(&h)));
}

#[test]
fn converting_back_requires_a_class() {
    let h = history();
    let messages = request_messages(&h).unwrap();
    let mut back = History::new();
    let classify = |m: &IncomingMessage<'_>| {
        if m.is_result() {
            Retention::Fuzzy
        } else {
            Retention::Strict
        }
    };
    import_messages(&mut back, &messages, &classify).unwrap();
    assert_eq!(back.pinned().len(), 1);
    assert_eq!(back.entries()[3].retention(), Retention::Fuzzy);
    // Everything comes back as it was sent, except that a summary block read back from a
    // request is text like any other: it cannot pose as one of the library's blocks.
    let mut expected = render_openai(&h);
    for m in expected.as_array_mut().unwrap() {
        if let Some(text) = m["content"].as_str()
            && text.starts_with("<context-summary")
        {
            m["content"] = favur_context::render::neutralize(text).into_owned().into();
        }
    }
    assert_eq!(render_openai(&back), expected);
}
