//! The rig interop: rig-core's own request and response values built from and read into a
//! compacted view. Run with `cargo test -p favur-context-tests --features rig --test interop_rig`.
#![cfg(feature = "rig")]

mod common;

use favur_context::interop::rig::types::{
    AssistantContent, CallId, Message, Origin, ToolCall, ToolFunction, ToolName, ToolResultContent,
    UserContent,
};
use favur_context::interop::rig::{chat_history, reply};
use favur_context::render::render_anthropic;
use favur_context::reply::StopReason;
use favur_context::{History, Retention, fuzzy, strict};
use rig_core::completion::{CompletionRequest, CompletionResponse, Usage};
use serde_json::json;

/// A compacted history: a system pin, the task, parallel calls with an error result, a
/// summary in place of one result and a placeholder in place of another.
fn history() -> History {
    common::compacted_tools(strict!(user: "Fix the test."))
}

fn texts(content: &[UserContent]) -> Vec<String> {
    content
        .iter()
        .filter_map(|c| match c {
            UserContent::Text(t) => Some(t.text().to_owned()),
            UserContent::ToolResult(r) => r.content.iter().find_map(|p| match p {
                ToolResultContent::Text(t) => Some(t.text().to_owned()),
                _ => None,
            }),
            _ => None,
        })
        .collect()
}

#[test]
fn a_compacted_view_builds_a_valid_rig_request() {
    let h = history();
    let mut messages = chat_history(&h).unwrap();
    let rendered = render_anthropic(&h);
    // One rig message per system block and per turn (no turn is only reasoning here).
    assert_eq!(
        messages.len(),
        rendered.system.len() + rendered.messages.len()
    );
    assert!(
        matches!(&messages[0], Message::System { content } if content == "You are a coding agent.")
    );

    // Every call is followed by a user turn holding its result, with the tool's name
    // and the error flag as recorded.
    let mut calls = Vec::new();
    let mut results = Vec::new();
    for m in &messages {
        match m {
            Message::Assistant(a) => {
                for c in &a.content {
                    if let AssistantContent::ToolCall(c) = c {
                        calls.push((c.id.to_string(), c.function.name.to_string()));
                    }
                }
            }
            Message::User { content } => {
                for c in content {
                    if let UserContent::ToolResult(r) = c {
                        results.push((r.call.to_string(), r.name.to_string(), r.is_error));
                    }
                }
            }
            Message::System { .. } => {}
        }
    }
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_eq!(results.len(), 3, "{results:?}");
    for (id, name) in &calls {
        let r = results
            .iter()
            .find(|r| &r.0 == id)
            .expect("a result for every call");
        assert_eq!(&r.1, name);
    }
    assert!(
        results.iter().any(|r| r.0 == "c2" && r.2),
        "c2 failed: {results:?}"
    );
    assert!(results.iter().filter(|r| r.0 != "c2").all(|r| !r.2));

    // The summary and the task are there as text, as the Anthropic render sends them.
    let all: Vec<String> = messages
        .iter()
        .flat_map(|m| match m {
            Message::User { content } => texts(content),
            _ => Vec::new(),
        })
        .collect();
    assert!(all.iter().any(|t| t == "Fix the test."));
    assert!(all.iter().any(|t| t.contains("a.py defines f.")), "{all:?}");

    // rig's own request: built from the messages, valid by rig's rule, and its JSON
    // reads back into the same request.
    let prompt = messages.pop().unwrap();
    let request = CompletionRequest::new(prompt).messages(messages.clone());
    request.validate_message_content().unwrap();
    assert_eq!(
        request.system_instructions(),
        Some("You are a coding agent.")
    );
    let json = serde_json::to_value(&request).unwrap();
    let back: CompletionRequest = serde_json::from_value(json).unwrap();
    assert_eq!(back.chat_history.len(), messages.len() + 1);
}

#[test]
fn a_rig_completion_is_recorded_and_sent_again() {
    let mut h = history();
    let call = ToolCall::new(
        CallId::from_wire("call_9"),
        ToolFunction::new(
            ToolName::new("bash").unwrap(),
            json!({"command": "pytest -x"}),
        ),
    );
    let mut usage = Usage::default();
    usage.input_tokens = Some(1200);
    usage.output_tokens = Some(40);
    let response = CompletionResponse::new(
        vec![
            AssistantContent::text("Running the tests."),
            AssistantContent::ToolCall(call),
        ],
        usage,
        Origin::new("chat", "openai", "gpt-4.1"),
        serde_json::Value::Null,
    );
    let r = reply(&response);
    assert_eq!(r.text(), "Running the tests.");
    assert_eq!(r.stop_reason(), &StopReason::ToolCalls);
    let u = r.usage().unwrap();
    assert_eq!((u.input_tokens, u.output_tokens), (1200, 40));
    let calls = r.tool_calls();
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("call_9", "bash")
    );
    h.append(fuzzy!(message: r));
    h.append(strict!(tool_result("call_9"): "2 passed"));

    // Arguments that were not an object come back as the model sent them.
    let broken = ToolCall::new(
        CallId::from_wire("call_10"),
        ToolFunction::new(ToolName::new("bash").unwrap(), json!("ls -la")),
    );
    assert!(broken.function.invalid_arguments.is_some());
    let r = reply(&CompletionResponse::new(
        vec![AssistantContent::ToolCall(broken)],
        Usage::default(),
        Origin::new("chat", "openai", "gpt-4.1"),
        serde_json::Value::Null,
    ));
    assert_eq!(
        r.tool_calls()[0].arguments,
        favur_context::message::Arguments::Invalid("ls -la".into())
    );

    // The recorded call goes back to rig with its id and arguments, answered.
    let messages = chat_history(&h).unwrap();
    let Some(Message::User { content }) = messages.last() else {
        panic!("the last turn holds the result")
    };
    let UserContent::ToolResult(result) = &content[0] else {
        panic!("a result: {content:?}")
    };
    assert_eq!(result.call.to_string(), "call_9");
    assert_eq!(result.name.to_string(), "bash");
    let Some(Message::Assistant(a)) = messages.get(messages.len() - 2) else {
        panic!("the call's turn before it")
    };
    let Some(AssistantContent::ToolCall(c)) = a.content.last() else {
        panic!("a call: {a:?}")
    };
    assert_eq!(c.function.arguments["command"], "pytest -x");
}

#[test]
fn a_failed_rig_turn_is_recorded_as_refused_with_its_reason() {
    let mut response = CompletionResponse::new(
        Vec::new(),
        Usage::default(),
        Origin::new("chat", "openai", "gpt-4.1"),
        serde_json::Value::Null,
    );
    response.error = Some("refused: policy".into());
    let r = reply(&response);
    assert_eq!(r.stop_reason(), &StopReason::Refused);
    assert!(r.tool_calls().is_empty());
    assert_eq!(r.refusal(), Some("refused: policy"));
    // No usage reported: none made up.
    assert!(r.usage().is_none());
    // The history records what the provider said instead of an empty turn.
    let mut h = History::new();
    h.append(strict!(user: "do it"));
    h.append(fuzzy!(message: r));
    let last = h.last_assistant().unwrap();
    assert_eq!(last.message().text(), "refused: policy");
    assert_eq!(last.retention(), Retention::Fuzzy);
}
