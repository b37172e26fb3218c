//! Requests every provider's SDK types and rules accept (issue 29): Responses assistant
//! texts as input items the SDK types (an easy input message, or the output message with
//! its id, status and annotations), media types each provider supports (others become a
//! visible note), and the Gemini 3 placeholder thought signature.

mod common;

use common::parts::{assistant, call, image, result, text, thinking, tool, user};
use favur_context::message::{Media, Reasoning};
use favur_context::render::validate::{
    Rule, validate_anthropic_strict, validate_gemini_strict, validate_openai_strict,
    validate_responses_strict,
};
use favur_context::render::{
    GeminiOptions, PLACEHOLDER_THOUGHT_SIGNATURE, render_anthropic, render_gemini,
    render_gemini_with, render_openai, render_responses, request_tokens,
};
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

/// A user message with a base64 image of each type, a tool call, and its result carrying
/// a BMP screenshot.
fn images() -> History {
    let mut h = History::new();
    let shot = |t: &str| image(Media::base64(t, "AAAA"));
    h.append(
        user([
            text("look"),
            shot("image/bmp"),
            shot("image/gif"),
            shot("image/heic"),
            shot("image/png"),
        ])
        .classify(Retention::Strict),
    );
    h.append(assistant([call("c1", "shot", json!({}))]).classify(Retention::Fuzzy));
    h.append(tool([result("c1", "taken"), shot("image/bmp")]).classify(Retention::Fuzzy));
    h
}

/// Every string in `v` (texts, URLs, media types), depth first.
fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// Which of `types` `request` sends as media (a data URL or a MIME type), and which as a
/// note (a text naming it).
fn sent(request: &serde_json::Value, types: &[&str]) -> (Vec<String>, Vec<String>) {
    let mut all = Vec::new();
    strings(request, &mut all);
    let as_media = |t: &str| {
        all.iter()
            .any(|s| s.starts_with(&format!("data:{t};")) || s == t)
    };
    let as_note = |t: &str| all.iter().any(|s| s.starts_with(&format!("[image {t}")));
    let pick = |f: &dyn Fn(&str) -> bool| {
        types
            .iter()
            .filter(|t| f(t))
            .map(|t| t.to_string())
            .collect()
    };
    (pick(&as_media), pick(&as_note))
}

#[test]
fn each_renderer_sends_the_image_types_its_provider_supports_and_notes_the_others() {
    let h = images();
    let types = ["image/bmp", "image/gif", "image/heic", "image/png"];
    let chat = render_openai(&h);
    validate_openai_strict(&chat).unwrap();
    let responses = render_responses(&h);
    validate_responses_strict(&responses).unwrap();
    let gemini = render_gemini(&h);
    validate_gemini_strict(&gemini).unwrap();
    let anthropic = render_anthropic(&h).to_value();
    validate_anthropic_strict(&anthropic).unwrap();
    let strs = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // Each format's media sent, then those noted. Chat notes every tool result's media
    // anyway.
    let (gif_png, bmp_heic) = (["image/gif", "image/png"], ["image/bmp", "image/heic"]);
    let cases = [
        ("chat", &chat, gif_png, bmp_heic),
        ("responses", &responses, gif_png, bmp_heic),
        (
            "gemini",
            &gemini,
            ["image/heic", "image/png"],
            ["image/bmp", "image/gif"],
        ),
        ("anthropic", &anthropic, gif_png, bmp_heic),
    ];
    for (format, request, media, noted) in cases {
        assert_eq!(
            sent(request, &types),
            (strs(&media), strs(&noted)),
            "{format}"
        );
    }
    // The tool's BMP is a note in its result, in every format.
    let output = &responses["input"][2]["output"];
    assert_eq!(responses["input"][2]["type"], "function_call_output");
    assert!(output.to_string().contains("[image image/bmp"), "{output}");
    let response_turn = &gemini["contents"][2]["parts"];
    assert_eq!(
        response_turn[1]["text"]
            .as_str()
            .map(|t| t.starts_with("[image image/bmp")),
        Some(true)
    );
}

#[test]
fn each_validator_refuses_an_image_type_its_provider_does_not_support() {
    let bad = |media_type: &str| Rule::BadMediaType {
        media_type: media_type.into(),
    };
    let chat = json!([{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/bmp;base64,AAAA"}}]}]);
    assert_eq!(
        validate_openai_strict(&chat).map_err(|e| e.rule),
        Err(bad("image/bmp"))
    );
    let responses = json!({"input": [{"role": "user", "content": [
        {"type": "input_image", "image_url": "data:image/heic;base64,AAAA"}]}]});
    assert_eq!(
        validate_responses_strict(&responses).map_err(|e| e.rule),
        Err(bad("image/heic"))
    );
    for (kind, source) in [("inlineData", "data"), ("fileData", "fileUri")] {
        let gemini = json!({"contents": [{"role": "user", "parts": [
            {kind: {"mimeType": "image/gif", source: "AAAA"}}]}]});
        assert_eq!(
            validate_gemini_strict(&gemini).map_err(|e| e.rule),
            Err(bad("image/gif"))
        );
        let pdf = json!({"contents": [{"role": "user", "parts": [
            {kind: {"mimeType": "application/pdf", source: "AAAA"}}]}]});
        assert_eq!(
            validate_gemini_strict(&pdf),
            Ok(()),
            "documents are not images"
        );
    }
}

/// An earlier turn (a call and its result, an answer), then the current one: a question,
/// a step of two parallel calls made by another provider, their results, and a step of one
/// call signed by Gemini, with its result.
fn two_turns() -> History {
    let mut h = History::new();
    let mut add = |m: Message| {
        h.append(m.classify(Retention::Fuzzy));
    };
    add(Message::user("first question"));
    add(assistant([call("old", "ls", json!({}))]));
    add(tool([result("old", "a.rs")]));
    add(assistant([text("Done.")]));
    add(Message::user("second question"));
    add(assistant([
        thinking(Reasoning::anthropic("plan", "sig-anthropic")),
        call("p1", "ls", json!({})),
        call("p2", "cat", json!({"path": "a.rs"})),
    ]));
    add(tool([result("p1", "a.rs")]));
    add(tool([result("p2", "fn main() {}")]));
    add(assistant([
        thinking(Reasoning::gemini_signature("sig-gemini")),
        call("g1", "test", json!({})),
    ]));
    add(tool([result("g1", "ok")]));
    h
}

/// The `thoughtSignature` of each `functionCall` part of `body`, in order.
fn call_signatures(body: &serde_json::Value) -> Vec<Option<String>> {
    let contents = body["contents"].as_array().unwrap();
    contents
        .iter()
        .flat_map(|c| c["parts"].as_array().unwrap())
        .filter(|p| p.get("functionCall").is_some())
        .map(|p| p["thoughtSignature"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn gemini_3_calls_of_the_current_turn_without_a_signature_carry_the_documented_placeholder() {
    let h = two_turns();
    let placeholder = Some(PLACEHOLDER_THOUGHT_SIGNATURE.to_owned());
    let signed = |s: &str| Some(s.to_owned());
    let gemini3 = render_gemini_with(&h, &GeminiOptions::for_model("gemini-3-pro-preview"));
    validate_gemini_strict(&gemini3).unwrap();
    assert_eq!(
        call_signatures(&gemini3),
        [
            None,                 // an earlier turn: not validated, left as it was
            placeholder.clone(),  // the first of the parallel calls of another provider
            None,                 // only the first call of a step needs one
            signed("sig-gemini"), // Gemini's own signature, as it came
        ]
    );
    assert_eq!(
        PLACEHOLDER_THOUGHT_SIGNATURE,
        "context_engineering_is_the_way_to_go"
    );

    // Off by default, and for models before Gemini 3; on by choice for any.
    let unsigned = [None, None, None, signed("sig-gemini")];
    assert_eq!(call_signatures(&render_gemini(&h)), unsigned);
    let older = render_gemini_with(&h, &GeminiOptions::for_model("gemini-2.5-pro"));
    assert_eq!(call_signatures(&older), unsigned);
    let chosen = GeminiOptions::default().placeholder_signatures(true);
    assert_eq!(render_gemini_with(&h, &chosen), gemini3);
    // Everything else is the same body.
    let mut stripped = gemini3.clone();
    let parts = stripped["contents"][5]["parts"][0].as_object_mut().unwrap();
    parts.remove("thoughtSignature");
    assert_eq!(stripped, render_gemini(&h));
}

#[test]
fn a_turn_still_in_its_first_step_gets_the_placeholder_on_its_open_call() {
    let mut h = History::new();
    h.append(Message::user("go").classify(Retention::Strict));
    h.append(assistant([call("c1", "ls", json!({}))]).classify(Retention::Fuzzy));
    let body = render_gemini_with(
        &h,
        &GeminiOptions::for_model("models/gemini-3-flash-preview"),
    );
    assert_eq!(
        call_signatures(&body),
        [Some(PLACEHOLDER_THOUGHT_SIGNATURE.to_owned())]
    );
    favur_context::render::validate::validate_gemini(&body).unwrap();
}
