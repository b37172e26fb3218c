//! Gemini: random histories compacted at every tier render to bodies the strict
//! validator accepts; the shared traces do at 8k, 32k and 128k windows; Gemini `contents`
//! (thought signatures, images, calls with and without ids) import and render back to
//! the same `contents`; each validator rule and each import error, by name.

mod common;

use common::parts::{after_reasoning_of_both, assistant, call, document, text, thinking, user};
use common::steps::{append, at_every_tier, run, step};
use common::{trace_files, traces_dir};
use favur_context::import::shell::ShellCommandClassifier;
use favur_context::import::{self, Format, ImportError, IncomingMessage};
use favur_context::message::{Media, Part, Provider, Reasoning};
use favur_context::render::render_gemini;
use favur_context::render::validate::{Rule, validate_gemini, validate_gemini_strict};
use favur_context::{Compactor, History, Message, Policy, Retention, Role, ToolCall};
use proptest::prelude::*;
use serde_json::{Value, json};

fn strict_valid(h: &History) -> Value {
    let body = render_gemini(h);
    if let Err(e) = validate_gemini_strict(&body) {
        panic!("gemini invalid (strict): {e}\n{body:#}");
    }
    body
}

/// An assistant turn whose call is signed (a Gemini signature right before it), and its
/// result.
fn signed_call(h: &mut History, class: Retention, k: usize) {
    let id = format!("signed_{k}");
    h.append(
        assistant([
            thinking(Reasoning::gemini_signature(format!("c2ln{k}"))),
            call(&id, "read", json!({"path": "a.rs"})),
        ])
        .classify(class),
    );
    h.append(Message::tool_result(id, "fn main() {}", false).classify(class));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn compacted_views_always_render_valid_gemini_bodies(
        steps in prop::collection::vec((step(), prop::option::weighted(0.2, common::class())), 1..30),
        run in run(),
    ) {
        let mut h = run.history();
        let mut compactor = run.budget.compactor();
        let mut k = 0;
        for (step, signed) in &steps {
            append(&mut h, step, &mut k);
            if let Some(class) = signed {
                k += 1;
                signed_call(&mut h, *class, k);
            }
            compactor.compact(&mut h).unwrap();
            strict_valid(&h);
        }
        at_every_tier(&h, run.budget, |forced| {
            strict_valid(forced);
        });
    }
}

#[test]
fn every_trace_replays_to_valid_gemini_bodies_at_every_window() {
    let Some(dir) = traces_dir() else { return };
    let files = trace_files(&dir);
    assert!(!files.is_empty(), "no traces under {}", dir.display());
    let mut requests = 0usize;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("readable trace");
        let messages = import::parse(Format::MiniSweAgent, &text)
            .and_then(|t| t.classify(&ShellCommandClassifier))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for window in [8_000, 32_000, 128_000] {
            let mut h = History::new();
            let mut compactor = Compactor::new(Policy::for_window(window).expect("window"));
            for m in &messages {
                if m.classified.message().role == Role::Assistant {
                    compactor.compact(&mut h).unwrap();
                    strict_valid(&h);
                    requests += 1;
                }
                if m.pin {
                    h.pin(m.classified.clone());
                } else {
                    h.append(m.classified.clone());
                }
            }
            let body = render_gemini(&h);
            validate_gemini(&body).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
    assert!(requests > 100, "only {requests} requests replayed");
}

/// A Gemini conversation with everything the importer keeps: a system instruction, a
/// thought summary, signatures on a call, a text and a trailing empty text, images
/// inline, by URL and returned by a tool, calls without ids (paired in order) and with.
fn conversation() -> Value {
    json!({
        "systemInstruction": {"parts": [{"text": "You are a coding agent."}, {"text": "Be brief."}]},
        "contents": [
            {"role": "user", "parts": [
                {"text": "What is in this screenshot?"},
                {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
                {"fileData": {"mimeType": "application/pdf", "fileUri": "https://example.com/spec.pdf"}},
            ]},
            {"role": "model", "parts": [
                {"text": "Looking at the files first.", "thought": true, "thoughtSignature": "dGhvdWdodA=="},
                {"functionCall": {"name": "ls", "args": {"path": "src"}}, "thoughtSignature": "c2lnLTE="},
                {"functionCall": {"name": "screenshot", "args": {}}},
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "ls", "response": {"output": "main.rs\nlib.rs"}}},
                {"functionResponse": {"name": "screenshot", "response": {"output": "taken"}}},
                {"inlineData": {"mimeType": "image/jpeg", "data": "/9j/4AAQ"}},
            ]},
            {"role": "model", "parts": [
                {"text": "Two files.", "thoughtSignature": "c2lnLTI="},
                {"functionCall": {"id": "call-7", "name": "cat", "args": {"path": "src/main.rs"}}},
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"id": "call-7", "name": "cat", "response": {"error": "permission denied"}}},
                {"text": "Try again with sudo."},
            ]},
            {"role": "model", "parts": [
                {"text": "I cannot use sudo."},
                {"text": "", "thoughtSignature": "c2lnLTM="},
            ]},
        ],
    })
}

fn imported(doc: &Value) -> History {
    let mut h = History::new();
    import::import(
        &mut h,
        Format::Gemini,
        &doc.to_string(),
        &|_: &IncomingMessage<'_>| Retention::Strict,
    )
    .unwrap();
    h
}

#[test]
fn gemini_contents_import_and_render_back_the_same() {
    let doc = conversation();
    let h = imported(&doc);
    let body = strict_valid(&h);
    assert_eq!(body, doc, "{body:#}");
    // The signatures are held as reasoning parts right before the part they signed.
    let model = h
        .entries()
        .iter()
        .find(|e| e.message().tool_calls().count() == 2)
        .unwrap();
    let parts = &model.message().parts;
    assert!(matches!(&parts[0], Part::Reasoning(r) if r.text == ["Looking at the files first."]));
    assert!(
        matches!(&parts[1], Part::Reasoning(r) if r.signature.as_deref() == Some("c2lnLTE=") && r.text.is_empty())
    );
    assert!(matches!(&parts[2], Part::ToolCall(c) if c.name == "ls"));
    // Calls without ids got deterministic ones, answered in order.
    let ids: Vec<&str> = model
        .message()
        .tool_calls()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(ids, ["gemini_1_1", "gemini_1_2"]);
    // The image the tool returned stays with its result.
    let shot = h
        .entries()
        .iter()
        .find(|e| e.message().tool_results().any(|r| r.content == "taken"))
        .unwrap();
    assert!(matches!(&shot.message().parts[1], Part::Image(m) if m.media_type == "image/jpeg"));
}

#[test]
fn a_round_trip_is_stable_and_other_formats_do_not_send_gemini_signatures() {
    let doc = conversation();
    let h = imported(&doc);
    let again = imported(&render_gemini(&h));
    assert_eq!(render_gemini(&again), doc);
    let anthropic = favur_context::render::render_anthropic(&h)
        .to_value()
        .to_string();
    assert!(!anthropic.contains("c2lnLTE="), "{anthropic}");
    let openai = favur_context::render::render_openai(&h).to_string();
    assert!(!openai.contains("c2lnLTE="), "{openai}");
}

#[test]
fn reasoning_from_other_providers_is_not_sent_to_gemini() {
    let h = after_reasoning_of_both(text("done"), Retention::Strict);
    let body = strict_valid(&h);
    assert_eq!(
        body["contents"][1],
        json!({"role": "model", "parts": [{"text": "done"}]})
    );
}

#[test]
fn media_from_a_file_id_is_a_note_and_native_ids_are_sent() {
    let mut h = History::new();
    let pdf = Media::file("application/pdf", "file_9");
    h.append(user([text("read this"), document(pdf)]).classify(Retention::Strict));
    h.append(
        Message::assistant_calls([ToolCall::new("c1", "ls", json!([1]))])
            .classify(Retention::Fuzzy),
    );
    h.append(Message::tool_result("c1", "oops", true).classify(Retention::Fuzzy));
    let body = strict_valid(&h);
    assert_eq!(
        body["contents"][0]["parts"][1]["text"],
        "[document application/pdf, file file_9]"
    );
    assert_eq!(
        body["contents"][1]["parts"][0]["functionCall"],
        json!({"id": "c1", "name": "ls", "args": {"arguments": [1]}})
    );
    assert_eq!(
        body["contents"][2]["parts"][0]["functionResponse"],
        json!({"id": "c1", "name": "ls", "response": {"error": "oops"}})
    );
}

#[test]
fn results_of_one_turn_are_grouped_in_the_next_user_turn_in_call_order() {
    let mut h = History::new();
    h.append(Message::user("run both").classify(Retention::Strict));
    h.append(
        Message::assistant_calls([
            ToolCall::new("a", "ls", json!({})),
            ToolCall::new("b", "pwd", json!({})),
        ])
        .classify(Retention::Fuzzy),
    );
    // Answered out of order, in two tool messages, then a user message.
    h.append(Message::tool_result("b", "/work", false).classify(Retention::Fuzzy));
    h.append(Message::tool_result("a", "src", false).classify(Retention::Fuzzy));
    h.append(Message::user("and now?").classify(Retention::Strict));
    let body = strict_valid(&h);
    let contents = body["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 3, "{body:#}");
    let names: Vec<&str> = contents[2]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["functionResponse"]["name"].as_str())
        .collect();
    assert_eq!(names, ["ls", "pwd"]);
    assert_eq!(contents[2]["parts"][2]["text"], "and now?");
}

fn rule(body: Value) -> (Option<usize>, Rule) {
    let e = validate_gemini_strict(&json!({"contents": body})).unwrap_err();
    (e.index, e.rule)
}

#[test]
fn each_validator_rule_is_named() {
    let user = json!({"role": "user", "parts": [{"text": "go"}]});
    let call = |name: &str| json!({"functionCall": {"name": name, "args": {}}});
    let resp =
        |name: &str| json!({"functionResponse": {"name": name, "response": {"output": "x"}}});
    assert_eq!(
        rule(json!([{"role": "system", "parts": [{"text": "x"}]}])),
        (Some(0), Rule::UnknownRole("system".into()))
    );
    assert_eq!(
        rule(json!([{"parts": [{"text": "x"}]}])),
        (Some(0), Rule::MissingRole)
    );
    assert!(matches!(
        rule(json!([{"role": "user", "parts": []}])),
        (Some(0), Rule::BadContent(_))
    ));
    assert_eq!(
        rule(json!([{"role": "model", "parts": [{"text": "x"}]}])),
        (Some(0), Rule::FirstNotUser)
    );
    assert_eq!(rule(json!([user, user])), (Some(1), Rule::NotAlternating));
    assert_eq!(
        rule(json!([{"role": "user", "parts": [{"text": ""}]}])),
        (Some(0), Rule::EmptyText)
    );
    assert!(matches!(
        rule(json!([{"role": "user", "parts": [{"text": "a", "inlineData": {}}]}])),
        (Some(0), Rule::BadContent(_))
    ));
    assert_eq!(
        rule(
            json!([user, {"role": "model", "parts": [call("ls"), call("pwd")]}, {"role": "user", "parts": [resp("ls")]}])
        ),
        (
            Some(2),
            Rule::ResponseCount {
                calls: 2,
                responses: 1
            }
        )
    );
    assert_eq!(
        rule(
            json!([user, {"role": "model", "parts": [call("ls"), call("pwd")]}, {"role": "user", "parts": [resp("pwd"), resp("ls")]}])
        ),
        (
            Some(2),
            Rule::ResponseMismatch {
                position: 0,
                expected: "ls".into(),
                found: "pwd".into()
            }
        )
    );
    assert_eq!(
        rule(
            json!([user, {"role": "model", "parts": [{"functionCall": {"id": "a", "name": "ls"}}]},
            {"role": "user", "parts": [{"functionResponse": {"id": "b", "name": "ls", "response": {}}}]}])
        ),
        (
            Some(2),
            Rule::ResponseMismatch {
                position: 0,
                expected: "a".into(),
                found: "b".into()
            }
        )
    );
    assert_eq!(
        rule(json!([{"role": "user", "parts": [resp("ls")]}])),
        (
            Some(0),
            Rule::ResultWithoutCall {
                call_id: "ls".into()
            }
        )
    );
    assert_eq!(
        rule(json!([user, {"role": "model", "parts": [call("ls")]}])),
        (
            Some(1),
            Rule::MissingResult {
                call_id: "ls".into()
            }
        )
    );
    assert!(
        validate_gemini(&json!({"contents": [user, {"role": "model", "parts": [call("ls")]}]}))
            .is_ok()
    );
    // In flight: the last user turn answers some of the calls, in their order.
    let three = json!({"role": "model", "parts": [call("ls"), call("pwd"), call("cat")]});
    let partly = json!({"contents": [user, three, {"role": "user", "parts": [resp("pwd")]}]});
    assert!(validate_gemini(&partly).is_ok());
    assert!(validate_gemini_strict(&partly).is_err());
    let reversed =
        json!({"contents": [user, three, {"role": "user", "parts": [resp("cat"), resp("ls")]}]});
    assert!(matches!(
        validate_gemini(&reversed).unwrap_err().rule,
        Rule::ResponseMismatch { position: 1, .. }
    ));
    assert_eq!(
        rule(json!([{"role": "user", "parts": [call("ls")]}])),
        (
            Some(0),
            Rule::BlockNotAllowed {
                block: "functionCall".into(),
                role: "user".into()
            }
        )
    );
    assert!(matches!(
        rule(
            json!([user, {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": [1]}}]}])
        ),
        (Some(1), Rule::BadToolCall(_))
    ));
    assert!(matches!(
        rule(json!([user, {"role": "model", "parts": [{"text": "x", "thoughtSignature": ""}]}])),
        (Some(1), Rule::BadThoughtSignature(_))
    ));
    assert!(matches!(
        rule(json!([{"role": "user", "parts": [{"text": "x", "thoughtSignature": "c2ln"}]}])),
        (Some(0), Rule::BadThoughtSignature(_))
    ));
    assert!(matches!(
        rule(json!([user, {"role": "model", "parts": [{"text": "x", "thoughtSignature": 7}]}])),
        (Some(1), Rule::BadThoughtSignature(_))
    ));
    let bad_system = json!({"systemInstruction": {"parts": [{"inlineData": {"mimeType": "image/png", "data": "AA=="}}]}, "contents": [user]});
    assert!(matches!(
        validate_gemini_strict(&bad_system).unwrap_err().rule,
        Rule::BadSystem(_)
    ));
    assert_eq!(
        validate_gemini_strict(&json!({"contents": []}))
            .unwrap_err()
            .rule,
        Rule::Empty
    );
}

fn import_err(contents: Value) -> ImportError {
    import::parse(Format::Gemini, &json!({ "contents": contents }).to_string()).unwrap_err()
}

#[test]
fn import_errors_are_typed_and_name_the_turn() {
    let user = json!({"role": "user", "parts": [{"text": "go"}]});
    let model = json!({"role": "model", "parts": [
        {"functionCall": {"name": "ls", "args": {}}}, {"functionCall": {"name": "pwd", "args": {}}}]});
    let resp =
        |name: &str| json!({"functionResponse": {"name": name, "response": {"output": "x"}}});
    assert_eq!(
        import_err(json!([user, model, {"role": "user", "parts": [resp("ls")]}])),
        ImportError::ResponseCount {
            index: 2,
            calls: 2,
            responses: 1
        }
    );
    assert_eq!(
        import_err(
            json!([user, model, {"role": "user", "parts": [resp("ls"), resp("pwd"), resp("ls")]}])
        ),
        ImportError::ResponseCount {
            index: 2,
            calls: 2,
            responses: 3
        }
    );
    assert_eq!(
        import_err(json!([user, model, user])),
        ImportError::ResponseCount {
            index: 2,
            calls: 2,
            responses: 0
        }
    );
    assert_eq!(
        import_err(json!([user, model, {"role": "model", "parts": [{"text": "x"}]}])),
        ImportError::ResponseCount {
            index: 1,
            calls: 2,
            responses: 0
        }
    );
    assert!(matches!(
        import_err(json!([user, model, {"role": "user", "parts": [resp("pwd"), resp("ls")]}])),
        ImportError::Message { index: 2, .. }
    ));
    assert!(matches!(
        import_err(
            json!([{"role": "user", "parts": [{"functionResponse": {"id": "x", "name": "ls", "response": {}}}]}])
        ),
        ImportError::UnknownCall { index: 0, .. }
    ));
    assert!(matches!(
        import_err(json!([{"parts": [{"text": "x"}]}])),
        ImportError::Message { index: 0, .. }
    ));
    assert!(matches!(
        import_err(json!([user, {"role": "model", "parts": [{"executableCode": {"code": "1"}}]}])),
        ImportError::Message { index: 1, .. }
    ));
    // The last model turn may still be waiting for its results.
    let t = import::parse(Format::Gemini, &json!([user, model]).to_string()).unwrap();
    assert_eq!(t.messages().len(), 2);
    // A classifier is required and all or nothing.
    let mut h = History::new();
    let declines = NoModel;
    let err = import::import(
        &mut h,
        Format::Gemini,
        &conversation().to_string(),
        &declines,
    )
    .unwrap_err();
    assert!(matches!(err, ImportError::Unclassified { .. }));
    assert!(h.is_empty());
}

struct NoModel;

impl import::Classifier for NoModel {
    fn classify(&self, m: &IncomingMessage<'_>) -> Result<import::Decision, import::Unclassified> {
        match m.role() {
            Role::Assistant => Err(import::Unclassified("no rule for model turns".into())),
            _ => Ok(Retention::Strict.into()),
        }
    }
}

#[test]
fn provider_of_signatures_is_gemini() {
    let h = imported(&conversation());
    assert!(
        h.entries()
            .iter()
            .flat_map(|e| e.message().reasoning())
            .all(|r| r.provider == Provider::Gemini)
    );
}

#[test]
fn a_view_whose_first_turn_sends_nothing_to_gemini_starts_with_the_note() {
    let mut h = History::new();
    h.append(user([thinking(Reasoning::openai("rs_1", ["x"], None))]).classify(Retention::Strict));
    h.append(Message::assistant("done").classify(Retention::Fuzzy));
    let body = strict_valid(&h);
    assert_eq!(
        body["contents"][0]["parts"][0]["text"],
        favur_context::render::FIRST_TURN_NOTE
    );
    let mut only = History::new();
    only.append(
        assistant([thinking(Reasoning::anthropic("x", "sig"))]).classify(Retention::Strict),
    );
    let body = strict_valid(&only);
    assert_eq!(body["contents"].as_array().unwrap().len(), 1);
}
