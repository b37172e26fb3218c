//! The async-openai interop: a real request value of that crate built from a compacted
//! view. Run with `cargo test -p favur-context-tests --features async-openai --test interop`.
#![cfg(feature = "async-openai")]

mod common;

use common::{apply, reform, summarize};
use favur_context::import::IncomingMessage;
use favur_context::interop::async_openai::types::{
    ChatCompletionRequestMessage, CreateChatCompletionRequest, CreateChatCompletionRequestArgs,
};
use favur_context::interop::async_openai::{import_messages, request_messages};
use favur_context::render::render_openai;
use favur_context::{Form, History, Message, Retention, forgettable, fuzzy, strict};
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
    let mut h = History::new();
    h.pin(strict!(system: "You are a coding agent."));
    h.append(
        Message::user("Fix the test.")
            .with_extension("name", json!("ana"))
            .classify(Retention::Strict),
    );
    let a1 = h.append(fuzzy!(tool_call: "c1", "bash", json!({"command": "ls"})));
    let r1 = h.append(forgettable!(tool_result("c1"): "src\ntests"));
    h.append(fuzzy!(tool_calls: [("c2", "bash", r#"{"command":"pytest"}"#), ("c3", "bash", r#"{"command":"cat a.py"}"#)]));
    h.append(strict!(tool_error("c2"): "1 failed"));
    let r3 = h.append(fuzzy!(tool_result("c3"): "def f(): pass"));
    h.append(fuzzy!(assistant: "Found it."));
    let (sid, s) = summarize(&h, &[r3], "a.py defines f.");
    apply(
        &mut h,
        vec![
            s,
            reform(r3, Form::Placeholder { summary: Some(sid) }),
            reform(r1, Form::Placeholder { summary: None }),
            reform(a1, Form::CallsOnly),
        ],
    );
    h
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
