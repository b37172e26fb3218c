//! Requests every provider's SDK types and rules accept (issue 29): Responses assistant
//! texts as input items the SDK types (an easy input message, or the output message with
//! its id, status and annotations), media types each provider supports (others become a
//! visible note), and the Gemini 3 placeholder thought signature.

mod common;

use common::parts::{assistant, text};
use favur_context::render::{render_responses, request_tokens};
use favur_context::validate::{Rule, validate_responses_strict};
use favur_context::{History, Message, Retention};
use serde_json::json;

/// A history of a user message and `reply`.
fn asked(reply: Message) -> History {
    let mut h = History::new();
    h.append(Message::user("go").classify(Retention::Strict));
    h.append(reply.classify(Retention::Fuzzy));
    h
}

#[test]
fn responses_assistant_texts_are_easy_input_messages_or_full_output_messages() {
    let h = asked(assistant([text("Looking."), text("Done.")]));
    let request = render_responses(&h);
    let input = request["input"].as_array().unwrap();
    assert_eq!(
        &input[1..],
        &[
            json!({"type": "message", "role": "assistant", "content": "Looking."}),
            json!({"type": "message", "role": "assistant", "content": "Done."}),
        ],
        "without an item id: one easy input message per text, content a string"
    );
    validate_responses_strict(&request).unwrap();
    assert_eq!(
        request_tokens(&request, h.counter(), h.framing_tokens()),
        h.usage_tokens(),
        "each text is still one counted block"
    );

    // With the id the API gave the message: the output message it was.
    let mut reply = assistant([text("Looking."), text("Done.")]);
    reply
        .extensions
        .insert("favur_item_ids".into(), json!(["msg_1"]));
    let request = render_responses(&asked(reply));
    assert_eq!(
        request["input"][1],
        json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": "Looking.", "annotations": []},
                           {"type": "output_text", "text": "Done.", "annotations": []}]})
    );
    validate_responses_strict(&request).unwrap();
}

#[test]
fn the_responses_validator_refuses_an_assistant_content_list_that_is_no_output_message() {
    let user = json!({"type": "message", "role": "user", "content": "go"});
    let rule = |assistant: serde_json::Value| {
        validate_responses_strict(&json!({"input": [user, assistant]}))
            .map_err(|e| (e.index, e.rule))
    };
    let bare = json!({"type": "message", "role": "assistant",
                      "content": [{"type": "output_text", "text": "x"}]});
    for (what, item) in [
        (
            "no id, status or annotations (what was rendered before)",
            bare.clone(),
        ),
        (
            "no status",
            json!({"type": "message", "id": "msg_1", "role": "assistant",
            "content": [{"type": "output_text", "text": "x", "annotations": []}]}),
        ),
        (
            "no annotations",
            json!({"type": "message", "id": "msg_1", "role": "assistant",
            "status": "completed", "content": [{"type": "output_text", "text": "x"}]}),
        ),
    ] {
        match rule(item) {
            Err((Some(1), Rule::BadContent(m))) => assert!(m.contains("output message"), "{m}"),
            other => panic!("{what}: {other:?}"),
        }
    }
    // An input part in an assistant message: the API refuses it whatever the SDK types.
    assert!(matches!(
        rule(json!({"role": "assistant", "content": [{"type": "input_text", "text": "x"}]})),
        Err((Some(1), Rule::BlockNotAllowed { .. }))
    ));
    assert_eq!(rule(json!({"role": "assistant", "content": "x"})), Ok(()));
    let full = json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "x", "annotations": []},
                    {"type": "refusal", "refusal": "no"}]});
    assert_eq!(rule(full), Ok(()));
}
