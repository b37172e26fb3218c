//! The LLM summarizer against a real HTTP server on 127.0.0.1 (feature `llm`):
//! `cargo test -p favur-context-tests --features llm --test llm_summarizer`.
#![cfg(feature = "llm")]

#[path = "../../favur-context/examples/stand_in/mod.rs"]
mod stand_in;

use std::num::NonZeroU8;
use std::time::Duration;

use favur_context::compact::{AsyncSummarizer, LlmConfig, LlmSummarizer, SummaryRequest};
use favur_context::tokens::{HeuristicCounter, TokenCounter};
use favur_context::{Compactor, EntryId, History, Policy, Retention, forgettable, fuzzy, strict};
use stand_in::{Answer, StandIn};

fn history() -> History {
    let mut h = History::new();
    h.append(
        strict!(tool_call: "c1", "bash", serde_json::json!({"command": "cargo test -p parser"})),
    );
    h.append(strict!(tool_error("c1"): "error[E0425]: cannot find value `tokens` in this scope\n --> src/parse.rs:42:9\nexit status 101"));
    h
}

fn request<'a>(entries: &'a [&'a favur_context::Entry], budget: u32) -> SummaryRequest<'a> {
    SummaryRequest {
        summary: EntryId(2),
        tier: NonZeroU8::new(2).unwrap(),
        retention: Retention::Strict,
        budget_tokens: budget,
        entries,
        context: &[],
        later: &[],
    }
}

fn config(server: &StandIn) -> LlmConfig {
    LlmConfig::new(&server.base_url, "stand-in-model")
        .timeout(Duration::from_millis(500))
        .backoff(Duration::from_millis(10))
        .retries(2)
}

#[tokio::test]
async fn success_sends_the_prompt_model_key_and_budget() {
    // The only test that sets this variable; read once by `new`.
    unsafe { std::env::set_var("FAVUR_TEST_LLM_KEY", "sk-test-123") };
    let server = StandIn::start(vec![Answer::completion(
        "ran `cargo test -p parser`: exit status 101\nerror[E0425] at src/parse.rs:42:9",
    )])
    .await;
    let llm = LlmSummarizer::new(config(&server).api_key_env("FAVUR_TEST_LLM_KEY")).unwrap();
    let h = history();
    let entries: Vec<_> = h.entries().iter().collect();
    let text = llm.summarize(&request(&entries, 150)).await.unwrap();
    assert!(text.contains("src/parse.rs:42:9"));

    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    let r = &seen[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(r.header("authorization"), Some("Bearer sk-test-123"));
    let body = r.json();
    assert_eq!(body["model"], "stand-in-model");
    assert_eq!(body["max_tokens"], 150);
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("150 tokens"), "{system}");
    assert!(
        system.contains("identifiers")
            && system.contains("error")
            && system.contains("commands")
            && system.contains("decision")
    );
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("cargo test -p parser") && user.contains("src/parse.rs:42:9"),
        "{user}"
    );
    assert!(user.contains("entry #1 (tool, strict)"));
}

#[tokio::test]
async fn a_server_error_is_retried_then_succeeds() {
    let server = StandIn::start(vec![
        Answer::Status(503, r#"{"error":{"message":"overloaded"}}"#.into()),
        Answer::Status(429, r#"{"error":{"message":"rate limited"}}"#.into()),
        Answer::completion("the gist"),
    ])
    .await;
    let llm = LlmSummarizer::new(config(&server)).unwrap();
    let h = history();
    let entries: Vec<_> = h.entries().iter().collect();
    assert_eq!(
        llm.summarize(&request(&entries, 100)).await.unwrap(),
        "the gist"
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_client_error_is_not_retried() {
    let server = StandIn::start(vec![
        Answer::Status(
            401,
            r#"{"error":{"message":"Incorrect API key provided"}}"#.into(),
        ),
        Answer::completion("never asked for"),
    ])
    .await;
    let llm = LlmSummarizer::new(config(&server)).unwrap();
    let h = history();
    let entries: Vec<_> = h.entries().iter().collect();
    let err = llm.summarize(&request(&entries, 100)).await.unwrap_err();
    assert!(
        err.message().contains("401") && err.message().contains("Incorrect API key"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn retries_run_out() {
    let server = StandIn::start(vec![Answer::Status(500, "{}".into()); 3]).await;
    let llm = LlmSummarizer::new(config(&server).retries(1)).unwrap();
    let h = history();
    let entries: Vec<_> = h.entries().iter().collect();
    let err = llm.summarize(&request(&entries, 100)).await.unwrap_err();
    assert!(err.message().ends_with("(after 2 attempts)"), "{err}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_hanging_model_times_out() {
    let server = StandIn::start(vec![Answer::Hang, Answer::Hang]).await;
    let llm = LlmSummarizer::new(
        config(&server)
            .timeout(Duration::from_millis(200))
            .retries(1),
    )
    .unwrap();
    let h = history();
    let entries: Vec<_> = h.entries().iter().collect();
    let err = llm.summarize(&request(&entries, 100)).await.unwrap_err();
    assert!(err.message().contains("timed out"), "{err}");
    assert_eq!(server.requests().len(), 2, "the timeout is retried");
}

#[tokio::test]
async fn a_garbage_body_fails_with_what_was_wrong() {
    let server = StandIn::start(vec![
        Answer::Status(200, "<html>502 Bad Gateway</html>".into()),
        Answer::Status(200, r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"  "},"finish_reason":"stop"}]}"#.into()),
        Answer::Status(200, r#"{"object":"list","data":[]}"#.into()),
    ])
    .await;
    let llm = LlmSummarizer::new(config(&server)).unwrap();
    let h = history();
    let entries: Vec<_> = h.entries().iter().collect();
    let err = llm.summarize(&request(&entries, 100)).await.unwrap_err();
    assert!(err.message().contains("not JSON"), "{err}");
    let err = llm.summarize(&request(&entries, 100)).await.unwrap_err();
    assert!(err.message().contains("empty summary"), "{err}");
    let err = llm.summarize(&request(&entries, 100)).await.unwrap_err();
    assert!(err.message().contains("choices: missing"), "{err}");
}

#[tokio::test]
async fn an_over_long_summary_is_cut_to_the_budget() {
    let long = "kept line about src/parse.rs\n".repeat(200);
    let server = StandIn::start(vec![Answer::completion(&long)]).await;
    let llm = LlmSummarizer::new(config(&server))
        .unwrap()
        .with_counter(HeuristicCounter);
    let h = history();
    let entries: Vec<_> = h.entries().iter().collect();
    let text = llm.summarize(&request(&entries, 80)).await.unwrap();
    assert!(
        HeuristicCounter.count_text(&text) <= 80,
        "{}",
        HeuristicCounter.count_text(&text)
    );
    assert!(text.starts_with("kept line about src/parse.rs\n"));
    assert!(text.ends_with("…[cut]"));
}

fn busy_history() -> History {
    let mut h = History::new();
    h.append(strict!(user: "fix the parser"));
    for i in 0..6 {
        h.append(fuzzy!(tool_call: format!("c{i}"), "cat", serde_json::json!({"path": format!("src/m{i}.rs")})));
        h.append(forgettable!(tool_result(format!("c{i}")): "{}", "fn item() {}\n".repeat(40)));
    }
    h.append(fuzzy!(assistant: "found it"));
    h
}

#[tokio::test]
async fn the_engine_uses_the_model_and_falls_back_when_it_fails() {
    // Success: every run's summary is the model's text.
    let server = StandIn::start(vec![Answer::completion("MODEL SUMMARY"); 8]).await;
    let mut h = busy_history();
    let mut c = Compactor::with_summarizer(
        Policy::for_window(14_000).unwrap(),
        LlmSummarizer::new(config(&server)).unwrap(),
    );
    let report = c
        .compact_async(&mut h)
        .await
        .unwrap()
        .expect("a tier is due");
    assert!(report.summarizer_calls > 0);
    assert!(report.fallbacks.is_empty(), "{report}");
    for id in &report.summaries {
        assert!(
            h.recall(*id)
                .unwrap()
                .message()
                .text()
                .contains("MODEL SUMMARY")
        );
    }
    assert_eq!(server.requests().len(), report.summarizer_calls);

    // Failure: the built-in summarizer writes them, and the report counts the fallbacks.
    let down = StandIn::start(vec![Answer::Status(500, "{}".into()); 30]).await;
    let mut h = busy_history();
    let llm = LlmSummarizer::new(config(&down).retries(0)).unwrap();
    let mut c = Compactor::with_summarizer(Policy::for_window(14_000).unwrap(), llm);
    let report = c
        .compact_async(&mut h)
        .await
        .unwrap()
        .expect("a tier is due");
    assert_eq!(report.fallbacks.len(), report.summarizer_calls);
    assert!(
        report.fallbacks[0].error.contains("HTTP 500"),
        "{}",
        report.fallbacks[0].error
    );
    for id in &report.summaries {
        assert!(
            !h.recall(*id)
                .unwrap()
                .message()
                .text()
                .contains("MODEL SUMMARY")
        );
    }
}

#[test]
fn the_summarize_future_is_send() {
    fn send<T: Send>(_: &T) {}
    let llm = LlmSummarizer::new(LlmConfig::new("http://127.0.0.1:9", "m")).unwrap();
    let h = history();
    let entries: Vec<_> = h.entries().iter().collect();
    let req = request(&entries, 10);
    let fut = llm.summarize(&req);
    send(&fut);
}
