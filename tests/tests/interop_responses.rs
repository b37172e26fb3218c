//! The async-openai Responses interop: a real `CreateResponse` built from a view with
//! reasoning, images and calls, and its items imported back. Run with
//! `cargo test -p favur-context-tests --features async-openai --test interop_responses`.
#![cfg(feature = "async-openai")]

mod common;

use common::parts::{assistant, document, image, result, text, thinking, tool, user};
use favur_context::import::IncomingMessage;
use favur_context::interop::async_openai_responses::types::{
    CreateResponse, CreateResponseArgs, InputItem, InputParam,
};
use favur_context::interop::async_openai_responses::{import_items, input_items};
use favur_context::message::{Media, Part, Reasoning};
use favur_context::render::render_responses;
use favur_context::{History, Message, Retention, ToolCall};
use serde_json::json;

fn history() -> History {
    let mut h = History::new();
    h.pin(Message::system("You are a coding agent.").classify(Retention::Strict));
    h.append(
        user([
            text("what is this?"),
            image(Media::base64("image/png", "iVBORw0KGgo=")),
            document(Media::file("application/pdf", "file_1").named("spec.pdf")),
        ])
        .classify(Retention::Strict),
    );
    h.append(
        assistant([
            thinking(Reasoning::openai("rs_1", ["a png"], Some("ENC".into()))),
            text("Looking."),
            Part::ToolCall(Box::new(
                ToolCall::new("call_1", "ls", json!({"path": "."})).with_provider_id("fc_1"),
            )),
        ])
        .with_extension("favur_item_ids", json!(["msg_1"]))
        .classify(Retention::Fuzzy),
    );
    h.append(tool([result("call_1", "a.rs")]).classify(Retention::Fuzzy));
    h.append(Message::assistant("Done.").classify(Retention::Fuzzy));
    h
}

#[test]
fn a_view_with_reasoning_and_media_builds_a_real_create_response() {
    let h = history();
    let items = input_items(&h).unwrap();
    assert_eq!(
        items.len(),
        render_responses(&h)["input"].as_array().unwrap().len()
    );
    let request: CreateResponse = CreateResponseArgs::default()
        .model("o4-mini")
        .input(InputParam::Items(items.clone()))
        .store(false)
        .build()
        .unwrap();
    let sent = serde_json::to_value(&request).unwrap();
    let input = sent["input"].as_array().unwrap();
    let kinds: Vec<&str> = input
        .iter()
        .map(|i| i["type"].as_str().unwrap_or("message"))
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "message",
            "reasoning",
            "message",
            "function_call",
            "function_call_output",
            "message"
        ]
    );
    assert_eq!(input[2]["encrypted_content"], "ENC");
    assert_eq!(input[4]["id"], "fc_1");
    assert_eq!(input[3]["id"], "msg_1");
    assert_eq!(
        input[1]["content"][1]["image_url"],
        "data:image/png;base64,iVBORw0KGgo="
    );

    // Back: the same messages (the pinned system prompt is a system message item).
    let mut back = History::new();
    import_items(&mut back, &items, &|_: &IncomingMessage<'_>| {
        Retention::Strict
    })
    .unwrap();
    let got: Vec<&Message> = back.entries().iter().map(|e| e.message()).collect();
    let want: Vec<&Message> = h.entries().iter().map(|e| e.message()).collect();
    assert_eq!(got, want);
    assert!(matches!(
        items[0],
        InputItem::EasyMessage(_) | InputItem::Item(_)
    ));
}
