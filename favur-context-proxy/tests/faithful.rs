//! The proxy is faithful to the client: answers and upstream errors come back as they
//! came, streams arrive as they are sent, credentials go only upstream, other paths pass
//! untouched; and what it refuses it refuses with a clear status, sending nothing.

mod common;

use std::time::{Duration, Instant};

use common::{Upstream, post_chat, start_proxy, start_with};
use favur_context_proxy::config::{Config, StoreSpec};
use futures_util::StreamExt;
use serde_json::{Value, json};

fn chat(text: &str) -> Value {
    json!({"model": "m", "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": text}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_arrives_chunk_by_chunk_and_byte_for_byte() {
    let upstream = Upstream::start().await;
    let proxy = start_proxy(&upstream, StoreSpec::Memory).await;
    let mut body = chat("stream please");
    body["stream"] = json!(true);
    let r = post_chat(&proxy, &body).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    assert_eq!(
        r.headers()["x-upstream"],
        "scripted",
        "the upstream's headers are passed back"
    );
    let start = Instant::now();
    let mut stream = r.bytes_stream();
    let mut got = Vec::new();
    let mut arrivals = Vec::new();
    while let Some(chunk) = stream.next().await {
        got.extend_from_slice(&chunk.unwrap());
        arrivals.push(start.elapsed());
    }
    let seen = upstream.seen();
    assert_eq!(got, seen[0].answer.to_vec());
    // The scripted upstream pauses 5 ms before each of its 4 events: a proxy that
    // buffered the answer would deliver it in one piece.
    assert!(
        arrivals.len() >= 3,
        "the stream came in {} pieces",
        arrivals.len()
    );
    assert!(*arrivals.last().unwrap() - arrivals[0] >= Duration::from_millis(8));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_error_comes_back_as_it_came() {
    let upstream = Upstream::start().await;
    let text = r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#;
    upstream.log.lock().unwrap().fail = Some((429, text.into()));
    let proxy = start_proxy(&upstream, StoreSpec::Memory).await;
    let r = post_chat(&proxy, &chat("hi")).await;
    assert_eq!(r.status(), 429);
    assert_eq!(r.text().await.unwrap(), text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_go_upstream_and_the_session_header_does_not() {
    let upstream = Upstream::start().await;
    let proxy = start_proxy(&upstream, StoreSpec::Memory).await;
    let r = reqwest::Client::new()
        .post(format!("{proxy}/v1/messages"))
        .header("x-api-key", "sk-ant-secret")
        .header("anthropic-version", "2023-06-01")
        .header("x-favur-session", "job-1")
        .json(&json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let seen = &upstream.seen()[0];
    assert_eq!(seen.headers["x-api-key"], "sk-ant-secret");
    assert_eq!(seen.headers["anthropic-version"], "2023-06-01");
    assert!(seen.headers.get("x-favur-session").is_none());
    let sessions: Value = common::recorded_sessions(&proxy).await;
    assert_eq!(sessions[0]["session"], "h-job-1");
    assert!(
        !sessions.to_string().contains("sk-ant-secret"),
        "credentials are never shown"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_paths_and_bodies_without_a_transcript_pass_untouched() {
    let upstream = Upstream::start().await;
    let proxy = start_proxy(&upstream, StoreSpec::Memory).await;
    let client = reqwest::Client::new();
    let r = client
        .get(format!("{proxy}/v1/models?limit=5"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let stateful = r#"{"model": "m", "previous_response_id": "resp_9", "input": [{"role": "user", "content": "go on"}]}"#;
    let r = client
        .post(format!("{proxy}/v1/responses"))
        .body(stateful)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let count = r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#;
    client
        .post(format!("{proxy}/v1/messages/count_tokens"))
        .body(count)
        .send()
        .await
        .unwrap();
    let seen = upstream.seen();
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("GET", "/v1/models")
    );
    assert_eq!(
        seen[1].body,
        stateful.as_bytes(),
        "a Responses body with server-held state is not touched"
    );
    assert_eq!(seen[2].body, count.as_bytes());
    let sessions: Value = common::recorded_sessions(&proxy).await;
    assert_eq!(sessions, json!([]), "nothing was recorded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_typed_and_nothing_is_sent() {
    let upstream = Upstream::start().await;
    let mut config = Config::new(&upstream.url, &upstream.url).unwrap();
    config.max_body_bytes = 4096;
    let proxy = start_with(config).await;
    let client = reqwest::Client::new();
    let url = format!("{proxy}/v1/chat/completions");
    let cases = [
        (chat(&"x".repeat(5000)).to_string(), 413, "body_too_large"),
        ("{\"messages\": [".to_owned(), 400, "not_json"),
        (
            json!({"model": "m", "messages": [{"role": "user", "content": "a"},
            {"role": "tool", "tool_call_id": "nope", "content": "b"}]})
            .to_string(),
            422,
            "transcript_not_importable",
        ),
        (
            r#"{"messages": [{"role": "user", "content": "a", "content": "b"}]}"#.to_owned(),
            422,
            "transcript_not_importable",
        ),
    ];
    for (body, status, code) in cases {
        let r = client.post(&url).body(body).send().await.unwrap();
        assert_eq!(r.status(), status);
        let e: Value = r.json().await.unwrap();
        assert_eq!(e["error"]["code"], code, "{e}");
        assert!(!e["error"]["message"].as_str().unwrap().is_empty());
    }
    assert!(
        upstream.seen().is_empty(),
        "a refused request is never sent"
    );
    let sessions: Value = common::recorded_sessions(&proxy).await;
    assert_eq!(sessions, json!([]), "nothing was recorded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_upstream_is_a_502() {
    let config = Config::new("http://127.0.0.1:9", "http://127.0.0.1:9").unwrap();
    let proxy = start_with(config).await;
    let r = post_chat(&proxy, &chat("hi")).await;
    assert_eq!(r.status(), 502);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["code"], "upstream_unreachable");
}
