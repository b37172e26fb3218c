//! The OpenAI Responses format and the new parts in every format (issue 13): random
//! histories with reasoning, images, documents and tool calls, compacted at every tier,
//! render through each renderer to requests its strict validator accepts; usage agrees
//! with the request where the format sends every part; summaries never carry a
//! signature or an encrypted payload; the incremental renderer gives the same bytes; a
//! history renders to Responses and Anthropic and imports back to the same messages.

mod common;

use common::parts::{
    after_reasoning_of_both, assistant, call, document, image, result, text, thinking, tool, user,
};
use common::render_valid;
use common::steps::{at_every_tier_then_last, budget_in, started, words};
use favur_context::import::{self, Format, IncomingMessage};
use favur_context::message::{Media, Part, Provider, Reasoning, ToolResult};
use favur_context::render::validate::{Rule, validate_responses_strict};
use favur_context::render::{
    Renderer, render_anthropic, render_openai, render_responses, request_tokens,
};
use favur_context::{History, Message, Retention, Role, ToolCall};
use proptest::prelude::*;
use serde_json::json;

/// Whose reasoning an assistant turn carries.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Thinks {
    No,
    OpenAi,
    Anthropic,
    AnthropicRedacted,
    Gemini,
}

fn thinks() -> impl Strategy<Value = Thinks> {
    prop_oneof![
        Just(Thinks::No),
        Just(Thinks::OpenAi),
        Just(Thinks::Anthropic),
        Just(Thinks::AnthropicRedacted),
        Just(Thinks::Gemini),
    ]
}

/// The media a user or tool message carries.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Carries {
    Nothing,
    PngBase64,
    ImageUrl,
    ImageFile,
    PdfBase64,
    PdfUrl,
}

fn carries() -> impl Strategy<Value = Carries> {
    prop_oneof![
        3 => Just(Carries::Nothing),
        1 => Just(Carries::PngBase64),
        1 => Just(Carries::ImageUrl),
        1 => Just(Carries::ImageFile),
        1 => Just(Carries::PdfBase64),
        1 => Just(Carries::PdfUrl),
    ]
}

fn media(c: Carries, k: usize) -> Option<Part> {
    Some(match c {
        Carries::Nothing => return None,
        Carries::PngBase64 => Part::Image(Box::new(Media::base64(
            "image/png",
            "iVBORw0KGgo".repeat(k % 50 + 1),
        ))),
        Carries::ImageUrl => Part::Image(Box::new(Media::url(
            "image/png",
            format!("https://example.com/{k}.png"),
        ))),
        Carries::ImageFile => Part::Image(Box::new(Media::file("image/jpeg", format!("file_{k}")))),
        Carries::PdfBase64 => Part::Document(Box::new(
            Media::base64("application/pdf", "JVBERi0x".repeat(k % 400 + 1))
                .named(format!("doc{k}.pdf")),
        )),
        Carries::PdfUrl => Part::Document(Box::new(Media::url(
            "application/pdf",
            format!("https://example.com/{k}.pdf"),
        ))),
    })
}

/// The secrets a reasoning part of turn `k` carries (never in a summary).
fn reasoning(t: Thinks, k: usize) -> Option<Reasoning> {
    Some(match t {
        Thinks::No => return None,
        Thinks::OpenAi => Reasoning::openai(
            format!("rs_{k}"),
            [words(8, k), words(5, k + 1)],
            Some(format!("ENC-{k}-payload")),
        ),
        Thinks::Anthropic => Reasoning::anthropic(words(12, k), format!("SIG-{k}-signature")),
        Thinks::AnthropicRedacted => Reasoning::anthropic_redacted(format!("ENC-{k}-redacted")),
        Thinks::Gemini => Reasoning::gemini_signature(format!("SIG-{k}-gemini")),
    })
}

#[derive(Debug, Clone)]
enum Step {
    User(Retention, usize, Carries),
    Assistant(Retention, usize, Thinks),
    Calls {
        class: Retention,
        thinks: Thinks,
        text: bool,
        results: Vec<(Retention, usize, Carries)>,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (common::class(), 1usize..300, carries()).prop_map(|(c, n, m)| Step::User(c, n, m)),
        (common::class(), 1usize..150, thinks()).prop_map(|(c, n, t)| Step::Assistant(c, n, t)),
        (
            common::class(),
            thinks(),
            any::<bool>(),
            prop::collection::vec((common::class(), 0usize..1200, carries()), 1..4),
        )
            .prop_map(|(class, thinks, text, results)| Step::Calls {
                class,
                thinks,
                text,
                results
            }),
    ]
}

fn append(h: &mut History, step: &Step, k: &mut usize) {
    *k += 1;
    let k0 = *k;
    match step {
        Step::User(c, n, m) => {
            let mut parts = vec![Part::Text(words(*n, k0))];
            parts.extend(media(*m, k0));
            h.append(Message::new(Role::User, parts).classify(*c));
        }
        Step::Assistant(c, n, t) => {
            let mut parts: Vec<Part> = reasoning(*t, k0).into_iter().map(Part::from).collect();
            parts.push(Part::Text(words(*n, k0)));
            h.append(Message::new(Role::Assistant, parts).classify(*c));
        }
        Step::Calls {
            class,
            thinks,
            text,
            results,
        } => {
            let mut parts: Vec<Part> = reasoning(*thinks, k0).into_iter().map(Part::from).collect();
            if *text {
                parts.push(Part::Text(words(15, k0)));
            }
            let ids: Vec<String> = (0..results.len())
                .map(|i| format!("call_{k0}_{i}"))
                .collect();
            for id in &ids {
                let mut call =
                    ToolCall::new(id.clone(), "bash", json!({"command": format!("run {id}")}));
                // Responses gives item ids to the calls of its own (reasoning) turns.
                if *thinks == Thinks::OpenAi {
                    call = call.with_provider_id(format!("fc_{id}"));
                }
                parts.push(Part::ToolCall(Box::new(call)));
            }
            h.append(Message::new(Role::Assistant, parts).classify(*class));
            for (id, (c, n, m)) in ids.iter().zip(results) {
                let mut parts = vec![Part::ToolResult(ToolResult {
                    call_id: id.clone(),
                    content: words(*n, *n),
                    is_error: false,
                })];
                parts.extend(media(*m, *n));
                h.append(Message::new(Role::Tool, parts).classify(*c));
            }
        }
    }
}

/// Every check of one history: each format's strict validator, the incremental renderer's
/// bytes, usage where the format sends every part, and no secret in a summary.
fn check(h: &History, renderer: &mut Renderer, only: Option<Provider>) {
    render_valid(h, true);
    assert_eq!(renderer.responses(h), &render_responses(h));
    assert_eq!(renderer.openai(h), &render_openai(h));
    assert_eq!(renderer.anthropic(h), &render_anthropic(h));
    let (counter, framing) = (h.counter(), h.framing_tokens());
    match only {
        Some(Provider::OpenAi) => {
            assert_eq!(
                request_tokens(&render_responses(h), counter, framing),
                h.usage_tokens()
            );
        }
        Some(Provider::Anthropic) => {
            assert_eq!(
                request_tokens(&render_anthropic(h).to_value(), counter, framing),
                h.usage_tokens()
            );
        }
        _ => {}
    }
    for e in h.entries().iter().filter(|e| e.kind().is_summary()) {
        let text = e.message().text();
        assert!(
            !text.contains("SIG-") && !text.contains("ENC-"),
            "a secret in summary {}:\n{text}",
            e.id()
        );
        assert!(
            !text.contains("iVBORw0KGgo") && !text.contains("JVBERi0x"),
            "media data in summary {}",
            e.id()
        );
    }
}

/// The one provider whose reasoning the steps hold, if only one does.
fn only_provider(steps: &[Step]) -> Option<Provider> {
    let mut seen = steps.iter().filter_map(|s| match s {
        Step::Assistant(_, _, t) | Step::Calls { thinks: t, .. } => Some(*t),
        Step::User(..) => None,
    });
    let providers: std::collections::BTreeSet<&str> = seen
        .by_ref()
        .filter_map(|t| match t {
            Thinks::No => None,
            Thinks::OpenAi => Some("openai"),
            Thinks::Anthropic | Thinks::AnthropicRedacted => Some("anthropic"),
            Thinks::Gemini => Some("gemini"),
        })
        .collect();
    match providers.into_iter().collect::<Vec<_>>().as_slice() {
        ["openai"] => Some(Provider::OpenAi),
        ["anthropic"] => Some(Provider::Anthropic),
        _ => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn rich_histories_compacted_at_every_tier_render_valid_requests_in_every_format(
        steps in prop::collection::vec(step(), 1..24),
        budget in budget_in(3_000..60_000, 60..400),
        pin in any::<bool>(),
    ) {
        let mut h = started(pin, true);
        let only = only_provider(&steps);
        let mut compactor = budget.compactor();
        let mut renderer = Renderer::new();
        let mut k = 0;
        for step in &steps {
            append(&mut h, step, &mut k);
            compactor.compact(&mut h).unwrap();
            check(&h, &mut renderer, only);
        }
        at_every_tier_then_last(
            &h,
            budget,
            |forced| check(forced, &mut Renderer::new(), only),
            |forced| check(forced, &mut renderer, only),
        );
    }
}

/// A history of every new part, in the shapes each format can carry back.
fn round_trip_history(provider: Provider) -> History {
    let thoughts = match provider {
        Provider::OpenAi => vec![Reasoning::openai(
            "rs_1",
            ["look first", "then list"],
            Some("ENC-1".into()),
        )],
        _ => vec![
            Reasoning::anthropic("look first", "SIG-1"),
            Reasoning::anthropic_redacted("ENC-2"),
        ],
    };
    let mut ls = ToolCall::new("call_1", "ls", json!({"path": "tests"}));
    if provider == Provider::OpenAi {
        ls = ls.with_provider_id("fc_1");
    }
    let turn = thoughts.into_iter().map(thinking);
    let turn = turn.chain([text("Let me look."), Part::ToolCall(Box::new(ls))]);
    let mut h = History::new();
    h.append(
        user([
            text("what is in these?"),
            image(Media::base64("image/png", "iVBORw0KGgoAAAANSUhEUg==")),
            image(Media::url("image/jpeg", "https://example.com/cat.jpg")),
            document(Media::base64("application/pdf", "JVBERi0xLjQ=").named("spec.pdf")),
        ])
        .classify(Retention::Strict),
    );
    h.append(assistant(turn).classify(Retention::Fuzzy));
    h.append(
        tool([
            result("call_1", "a screenshot"),
            image(Media::base64("image/png", "iVBORw0KGgoSCREEN")),
        ])
        .classify(Retention::Forgettable),
    );
    h.append(Message::assistant("It is a cat.").classify(Retention::Fuzzy));
    h
}

fn imported(format: Format, request: &serde_json::Value) -> Vec<Message> {
    let t = import::parse(format, &request.to_string())
        .unwrap_or_else(|e| panic!("{format}: {e}\n{request:#}"));
    t.messages().iter().map(|m| m.message.clone()).collect()
}

#[test]
fn reasoning_images_and_calls_render_to_responses_and_anthropic_and_import_back() {
    for (provider, format) in [
        (Provider::OpenAi, Format::Responses),
        (Provider::Anthropic, Format::Anthropic),
    ] {
        let h = round_trip_history(provider);
        let original: Vec<Message> = h.entries().iter().map(|e| e.message().clone()).collect();
        let request = match format {
            Format::Responses => render_responses(&h),
            _ => render_anthropic(&h).to_value(),
        };
        render_valid(&h, true);
        assert_eq!(
            imported(format, &request),
            original,
            "{format}:\n{request:#}"
        );
    }
}

#[test]
fn a_responses_transcript_imports_with_reasoning_ids_and_media() {
    let doc = json!({
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": "look at this"},
            {"type": "message", "role": "user", "content": [
                {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"}]},
        ],
        "output": [
            {"type": "reasoning", "id": "rs_9", "summary": [{"type": "summary_text", "text": "it is a png"}], "encrypted_content": "ENC"},
            {"type": "message", "id": "msg_9", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "A PNG.", "annotations": []}]},
            {"type": "function_call", "id": "fc_9", "call_id": "call_9", "name": "ls", "arguments": "{}"},
        ],
    });
    let t = import::parse(Format::Responses, &doc.to_string()).unwrap();
    let m = &t.messages()[3].message;
    assert!(t.messages()[0].pin);
    assert_eq!(m.reasoning().next().unwrap().id.as_deref(), Some("rs_9"));
    assert_eq!(
        m.tool_calls().next().unwrap().provider_id.as_deref(),
        Some("fc_9")
    );
    assert_eq!(m.extensions["favur_item_ids"], json!(["msg_9"]));
    assert!(
        matches!(&t.messages()[2].message.parts[0], Part::Image(i) if i.media_type == "image/png")
    );
    // The assistant message item keeps its id when rendered back.
    let mut h = History::new();
    t.import_into(&mut h, &|_: &IncomingMessage<'_>| Retention::Strict)
        .unwrap();
    h.append(Message::tool_result("call_9", "a.rs", false).classify(Retention::Fuzzy));
    let body = render_responses(&h);
    assert_eq!(body["input"][4]["id"], "msg_9");
    validate_responses_strict(&body).unwrap();
}

#[test]
fn malformed_responses_transcripts_name_the_item() {
    let err = |doc: serde_json::Value| {
        import::parse(Format::Responses, &doc.to_string())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(json!([{"type": "function_call_output", "call_id": "c1", "output": "x"}])),
        "message 0: tool result for unknown call `c1`"
    );
    assert_eq!(
        err(json!([{"role": "user", "content": "a"}, {"type": "reasoning", "summary": []}])),
        "message 1: a reasoning item has no `id` string"
    );
    assert_eq!(
        err(
            json!([{"role": "user", "content": [{"type": "input_image", "image_url": "data:;base64,AAAA"}]}])
        ),
        "message 0: an image or document has an empty media type"
    );
    assert_eq!(
        err(json!([{"type": "web_search_call", "id": "ws_1"}])),
        "message 0: item type `web_search_call` is not supported"
    );
    // All or nothing: a classifier is required and the history is untouched on error.
    let mut h = History::new();
    let bad = json!([{"role": "user", "content": "a"}, {"type": "function_call_output", "call_id": "x", "output": ""}]);
    assert!(
        import::import(
            &mut h,
            Format::Responses,
            &bad.to_string(),
            &|_: &IncomingMessage<'_>| Retention::Strict
        )
        .is_err()
    );
    assert!(h.is_empty());
}

#[test]
fn the_responses_validator_names_each_rule() {
    let user = json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]});
    let call = |id: &str, item: Option<&str>| {
        let mut c =
            json!({"type": "function_call", "call_id": id, "name": "ls", "arguments": "{}"});
        if let Some(item) = item {
            c["id"] = json!(item);
        }
        c
    };
    let out = |id: &str| json!({"type": "function_call_output", "call_id": id, "output": "ok"});
    let rs = |id: &str| json!({"type": "reasoning", "id": id, "summary": []});
    let rule = |input: serde_json::Value| {
        validate_responses_strict(&json!({"input": input})).map_err(|e| (e.index, e.rule))
    };
    assert_eq!(
        rule(json!([
            user,
            rs("rs_1"),
            call("c1", Some("fc_1")),
            out("c1")
        ])),
        Ok(())
    );
    assert_eq!(
        rule(json!([user, out("c1")])),
        Err((
            Some(1),
            Rule::ResultWithoutCall {
                call_id: "c1".into()
            }
        ))
    );
    assert_eq!(
        rule(json!([user, call("c1", None), out("c1"), out("c1")])),
        Err((
            Some(3),
            Rule::DuplicateResult {
                call_id: "c1".into()
            }
        ))
    );
    assert_eq!(
        rule(json!([user, call("c1", None)])),
        Err((
            Some(1),
            Rule::MissingResult {
                call_id: "c1".into()
            }
        ))
    );
    assert_eq!(
        rule(json!([
            user,
            rs("rs_1"),
            call("c1", Some("fc_1")),
            out("c1"),
            call("c2", Some("fc_2")),
            out("c2")
        ])),
        Err((
            Some(4),
            Rule::MissingReasoning {
                call_id: "c2".into()
            }
        ))
    );
    assert_eq!(
        rule(json!([user, rs("rs_1"), rs("rs_1")])),
        Err((Some(2), Rule::DuplicateId { id: "rs_1".into() }))
    );
    assert!(matches!(
        rule(json!([user, {"type": "reasoning", "summary": []}])),
        Err((Some(1), Rule::BadReasoning(_)))
    ));
    let unstored = validate_responses_strict(&json!({"store": false, "input": [user, rs("rs_1")]}))
        .unwrap_err();
    assert!(matches!(unstored.rule, Rule::BadReasoning(ref why) if why.contains("store")));
    assert!(matches!(
        rule(
            json!([{"type": "message", "role": "assistant", "content": [{"type": "input_image", "image_url": "https://x/a.png"}]}])
        ),
        Err((Some(0), Rule::BlockNotAllowed { .. }))
    ));
    assert!(matches!(
        rule(
            json!([{"type": "message", "role": "user", "content": [{"type": "output_text", "text": "x"}]}])
        ),
        Err((Some(0), Rule::BlockNotAllowed { .. }))
    ));
    assert!(matches!(
        rule(
            json!([{"type": "message", "role": "user", "content": [{"type": "input_image", "image_url": "ftp://x"}]}])
        ),
        Err((Some(0), Rule::BadSource(_)))
    ));
    assert!(matches!(
        rule(json!([user, call("c1", None), call("c1", None)])),
        Err((Some(2), Rule::DuplicateCallId { .. }))
    ));
}

#[test]
fn reasoning_from_another_provider_is_not_sent_and_media_are_never_dropped() {
    let mut h = after_reasoning_of_both(call("c1", "shot", "{}"), Retention::Fuzzy);
    h.append(
        tool([
            result("c1", "done"),
            image(Media::file("image/png", "file_shot")),
        ])
        .classify(Retention::Fuzzy),
    );
    let (openai, anthropic) = render_valid(&h, true);
    let responses = render_responses(&h);
    let (o, a, r) = (
        openai.to_string(),
        anthropic.to_string(),
        responses.to_string(),
    );
    // Chat sends no reasoning; Anthropic only its own; Responses only OpenAI's.
    assert!(!o.contains("SIG-A") && !o.contains("ENC-O"));
    assert!(a.contains("SIG-A") && !a.contains("ENC-O"));
    assert!(r.contains("ENC-O") && !r.contains("SIG-A"));
    // The screenshot: a note in Chat's tool message, a block in Anthropic's tool_result,
    // a part of the Responses call output.
    assert!(
        openai[2]["content"]
            .as_str()
            .unwrap()
            .contains("[image image/png, file file_shot]"),
        "{openai:#}"
    );
    assert_eq!(
        anthropic["messages"][2]["content"][0]["content"][1]["source"],
        json!({"type": "file", "file_id": "file_shot"})
    );
    assert_eq!(responses["input"][3]["output"][1]["file_id"], "file_shot");
}

#[test]
fn a_responses_reply_appended_sends_its_reasoning_back_with_its_calls() {
    let body = json!({
        "id": "resp_1", "status": "completed", "model": "o4-mini", "error": null,
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "list first"}], "encrypted_content": "ENC-1"},
            {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "Listing.", "annotations": []}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "ls", "arguments": "{\"path\":\".\"}"},
        ],
        "usage": {"input_tokens": 30, "output_tokens": 12},
    });
    let reply = favur_context::reply::Reply::from_responses(&body.to_string()).unwrap();
    assert_eq!(reply.usage().unwrap().input_tokens, 30);
    let mut h = History::new();
    h.append(Message::user("list").classify(Retention::Strict));
    h.append(Message::from(reply).classify(Retention::Fuzzy));
    h.append(Message::tool_result("call_1", "a.rs", false).classify(Retention::Fuzzy));
    let input = render_responses(&h)["input"].clone();
    let kinds: Vec<&str> = input
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "message",
            "function_call",
            "function_call_output"
        ]
    );
    assert_eq!(input[1]["encrypted_content"], "ENC-1");
    assert_eq!(input[2]["id"], "msg_1");
    assert_eq!(input[3]["id"], "fc_1");
    validate_responses_strict(&json!({"store": false, "input": input})).unwrap();
    let err = favur_context::reply::Reply::from_responses(
        r#"{"output":[{"type":"function_call","call_id":"c","arguments":"{}"}]}"#,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "malformed reply at output[0].name: missing"
    );
}

#[test]
fn a_streamed_responses_reply_is_its_completed_response() {
    let mut s = favur_context::reply::ReplyStream::responses();
    let completed = json!({"type": "response.completed", "response": {
        "status": "completed", "model": "o4-mini",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ENC-2"},
            {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "ls", "arguments": "{}"},
        ],
        "usage": {"input_tokens": 5, "output_tokens": 3},
    }});
    for event in [
        json!({"type": "response.created", "response": {"status": "in_progress"}}),
        json!({"type": "response.output_text.delta", "delta": "Li"}),
        json!({"type": "response.output_text.delta", "delta": "sting"}),
        completed,
    ] {
        let frame = format!("event: x\ndata: {event}\n\n");
        s.feed(frame.as_bytes()).unwrap();
    }
    assert_eq!(s.text(), "Listing");
    let reply = s.finish().unwrap();
    assert_eq!(reply.tool_calls()[0].provider_id.as_deref(), Some("fc_2"));
    assert_eq!(
        reply
            .message()
            .reasoning()
            .next()
            .unwrap()
            .encrypted
            .as_deref(),
        Some("ENC-2")
    );
    // Cut before the end, or failed: typed errors.
    let mut cut = favur_context::reply::ReplyStream::responses();
    cut.push_data(r#"{"type":"response.output_text.delta","delta":"x"}"#)
        .unwrap();
    assert!(matches!(
        cut.finish(),
        Err(favur_context::reply::ReplyError::Incomplete(_))
    ));
    let mut failed = favur_context::reply::ReplyStream::responses();
    let err = failed
        .push_data(r#"{"type":"error","code":"rate_limit_exceeded","message":"slow down"}"#)
        .unwrap_err();
    assert!(
        matches!(err, favur_context::reply::ReplyError::Api { .. }),
        "{err}"
    );
}
