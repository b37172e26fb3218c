//! Real transcripts through the proxy, in every format it compacts: every request the
//! upstream receives is valid, holds the task, and is exactly what the engine makes of
//! the same transcript run directly; every answer reaches the client byte for byte.

mod common;

use common::{
    Direct, Upstream, holds, overhead, request_points, responses_requests, start_proxy,
    to_anthropic, to_chat, trace,
};
use favur_context::import::Format;
use favur_context::render::{render_anthropic, render_openai};
use favur_context_proxy::config::StoreSpec;
use serde_json::{Value, json};

/// Sends `body` to the proxy's `path`; returns the answer's bytes (asserting 200).
async fn send(client: &reqwest::Client, url: &str, body: &Value) -> bytes::Bytes {
    let r = client
        .post(url)
        .header("authorization", "Bearer sk-test")
        .json(body)
        .send()
        .await
        .unwrap();
    let status = r.status();
    let bytes = r.bytes().await.unwrap();
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    bytes
}

/// Checks what the upstream saw against the direct run and the client's answers.
fn check(upstream: &Upstream, expected: &[Value], answers: &[bytes::Bytes], task: &str) {
    let seen = upstream.seen_valid(expected.len(), "the upstream refused requests");
    for (i, ((s, want), answer)) in seen.iter().zip(expected).zip(answers).enumerate() {
        let got: Value = serde_json::from_slice(&s.body).unwrap();
        for (key, value) in want.as_object().unwrap() {
            assert_eq!(
                &got[key], value,
                "request {i}: `{key}` differs from the direct run"
            );
        }
        let head: String = task.chars().take(200).collect();
        assert!(holds(&got, &head), "request {i} lost the task");
        assert_eq!(
            &s.answer, answer,
            "answer {i} was not passed through byte for byte"
        );
        assert_eq!(s.headers.get("authorization").unwrap(), "Bearer sk-test");
        assert_eq!(got["model"], "m", "the client's other fields are kept");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_chat_shell_agent_is_compacted_as_the_engine_would() {
    let Some(trace) = trace("django__django-12858") else {
        return;
    };
    let upstream = Upstream::start().await;
    let proxy = start_proxy(&upstream, StoreSpec::Memory).await;
    let chat = to_chat(&trace);
    let client = reqwest::Client::new();
    let (mut direct, mut expected, mut answers) = (Direct::new(), Vec::new(), Vec::new());
    for i in request_points(&chat, |m| m["role"] == "assistant") {
        let body = json!({"model": "m", "messages": &chat[..i]});
        let format = favur_context_proxy::wire::Wire::Chat.format(&body);
        direct.step(format, &body, 0);
        expected.push(json!({"messages": render_openai(&direct.history)}));
        answers.push(send(&client, &format!("{proxy}/v1/chat/completions"), &body).await);
    }
    assert!(
        direct.compactions >= 3,
        "the trace should reach several tiers: {}",
        direct.compactions
    );
    check(
        &upstream,
        &expected,
        &answers,
        chat[1]["content"].as_str().unwrap(),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_calling_agent_is_compacted_in_chat_anthropic_and_responses() {
    let Some(trace) = trace("pvlib__pvlib-python-1154") else {
        return;
    };
    let task = trace[1]["content"].as_str().unwrap().to_owned();
    let client = reqwest::Client::new();

    // Chat Completions, streamed.
    let upstream = Upstream::start().await;
    let proxy = start_proxy(&upstream, StoreSpec::Memory).await;
    let chat = to_chat(&trace);
    let tools = json!([{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]);
    let (mut direct, mut expected, mut answers) = (Direct::new(), Vec::new(), Vec::new());
    for i in request_points(&chat, |m| m["role"] == "assistant") {
        let body = json!({"model": "m", "stream": true, "tools": tools, "messages": &chat[..i]});
        let overhead = overhead(&body);
        direct.step(Format::OpenAi, &body, overhead);
        expected.push(json!({"messages": render_openai(&direct.history), "tools": tools}));
        answers.push(send(&client, &format!("{proxy}/v1/chat/completions"), &body).await);
    }
    assert!(direct.compactions >= 2);
    check(&upstream, &expected, &answers, &task);

    // Anthropic Messages.
    let upstream = Upstream::start().await;
    let proxy = start_proxy(&upstream, StoreSpec::Memory).await;
    let (system, turns) = to_anthropic(&trace);
    let (mut direct, mut expected, mut answers) = (Direct::new(), Vec::new(), Vec::new());
    for i in request_points(&turns, |m| m["role"] == "assistant") {
        let body =
            json!({"model": "m", "max_tokens": 1024, "system": system, "messages": &turns[..i]});
        direct.step(Format::Anthropic, &body, overhead(&body));
        let r = render_anthropic(&direct.history);
        expected.push(json!({"messages": r.messages, "system": r.system}));
        answers.push(send(&client, &format!("{proxy}/v1/messages"), &body).await);
    }
    assert!(direct.compactions >= 2);
    check(&upstream, &expected, &answers, &task);

    // OpenAI Responses.
    let upstream = Upstream::start().await;
    let proxy = start_proxy(&upstream, StoreSpec::Memory).await;
    let (bodies, expected, direct) = responses_requests(&trace);
    let mut answers = Vec::new();
    for body in &bodies {
        answers.push(send(&client, &format!("{proxy}/v1/responses"), body).await);
    }
    assert!(direct.compactions >= 2);
    check(&upstream, &expected, &answers, &task);
}
