//! A complete async agent loop against a stand-in model server that this example starts on
//! 127.0.0.1 (scripted OpenAI-format replies: tool calls, then an answer; it also answers
//! the summarizer's requests, failing one of them to show the fallback).
//!
//! Replies are parsed with `Reply`, tools run from a `ToolSet`, the history is a journal
//! on disk that the loop reopens half-way (a restart), summaries come from the LLM
//! summarizer with the built-in one as fallback, and both renderers are checked at the end.
//!
//! Run it with `cargo run -p favur-context --example agent --features llm`
//! (or `--all-features`).

mod stand_in;

use std::sync::atomic::{AtomicUsize, Ordering};

use favur_context::compact::{LlmConfig, LlmSummarizer};
use favur_context::journal::JournaledHistory;
use favur_context::render::validate::{validate_anthropic_strict, validate_openai_strict};
use favur_context::render::{render_anthropic, render_openai};
use favur_context::reply::Reply;
use favur_context::store::NewEntry;
use favur_context::tools::{AsyncTool, ToolFuture, ToolSet};
use favur_context::{Compactor, Policy, Retention, Store, fuzzy, retention, strict};
use serde_json::{Value, json};
use stand_in::{Answer, Request, StandIn};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = StandIn::with_handler(scripted_model).await;
    let path = std::env::temp_dir().join(format!("favur-agent-{}.jsonl", std::process::id()));
    let tools = ToolSet::new(Retention::Strict)
        .with(ListDir)?
        .with(ReadFile)?
        .with(RunTests)?
        .with_recall(Retention::Fuzzy)?;
    let llm = LlmSummarizer::new(LlmConfig::new(&model.base_url, "stand-in").retries(0))?;
    let policy = Policy::builder()
        .window_tokens(240_000)
        .reserve_output_tokens(2_000)
        .build()?;
    let mut compactor = Compactor::with_summarizer(policy, llm);
    let client = reqwest::Client::new();

    let mut history = JournaledHistory::open_or_create(&path, setup)?;
    let (mut turns, mut fallbacks, url) = (0, 0, format!("{}/chat/completions", model.base_url));
    let answer = loop {
        if turns == 5 {
            drop(history); // a restart: everything acknowledged is in the journal
            history = JournaledHistory::open_or_create(&path, setup)?;
            let (entries, open) = (history.history().len(), history.history().pending_calls());
            println!("resumed: {entries} entries, {} calls left open", open.len());
        }
        history.budget_tools(&tools)?; // journaled once; the same value again writes nothing
        if let Some(report) = compactor.prepare_async(&mut history).await?.report {
            fallbacks += report.fallbacks.len();
            println!("{report}");
        }
        let messages = render_openai(history.history());
        let request =
            json!({"model": "stand-in", "messages": messages, "tools": tools.openai_tools()});
        let body = client
            .post(&url)
            .json(&request)
            .send()
            .await?
            .text()
            .await?;
        let reply = Reply::from_openai(&body)?;
        let (calls, text) = (reply.tool_calls(), reply.text());
        history.append(fuzzy!(message: reply))?;
        turns += 1;
        if calls.is_empty() {
            break text;
        }
        for result in tools.run_all(&calls, history.history()).await {
            history.append(result)?;
        }
    };
    validate_openai_strict(&render_openai(history.history()))?;
    validate_anthropic_strict(&render_anthropic(history.history()).to_value())?;
    let (entries, compactions) = (
        history.history().len(),
        history.history().compactions().len(),
    );
    println!("{turns} turns, {entries} entries, {compactions} compactions, {fallbacks} fallbacks");
    println!("answer: {answer}");
    std::fs::remove_file(&path)?;
    Ok(())
}

/// The task, set up once: a resumed journal already holds it.
fn setup() -> Vec<NewEntry> {
    vec![
        NewEntry::pinned(strict!(system: "You are a careful coding agent. Use the tools.")),
        NewEntry::pinned(strict!(user: "The parser test fails. Find out why and fix it.")),
    ]
}

/// Lists a directory of this crate.
struct ListDir;

#[retention(forgettable)]
impl AsyncTool for ListDir {
    fn name(&self) -> &str {
        "list_dir"
    }
    fn description(&self) -> &str {
        "List the files of a directory of the project"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    }
    fn call<'a>(&'a self, arguments: &'a Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let dir = project_path(arguments)?;
            let mut names = Vec::new();
            let mut entries = tokio::fs::read_dir(&dir).await.map_err(|e| e.to_string())?;
            while let Some(e) = entries.next_entry().await.map_err(|e| e.to_string())? {
                names.push(e.file_name().to_string_lossy().into_owned());
            }
            names.sort();
            Ok(names.join("\n"))
        })
    }
}

/// Shows a file of this crate.
struct ReadFile;

#[retention(fuzzy)]
impl AsyncTool for ReadFile {
    fn name(&self) -> &str {
        "read_file"
    }
    fn description(&self) -> &str {
        "Show a file of the project"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    }
    fn call<'a>(&'a self, arguments: &'a Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let file = project_path(arguments)?;
            tokio::fs::read_to_string(&file)
                .await
                .map_err(|e| format!("{}: {e}", file.display()))
        })
    }
}

/// The test run: scripted output (the example does not run cargo).
struct RunTests;

#[retention(strict)]
impl AsyncTool for RunTests {
    fn name(&self) -> &str {
        "run_tests"
    }
    fn description(&self) -> &str {
        "Run the test suite"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _: &'a Value) -> ToolFuture<'a> {
        Box::pin(async move {
            Err("running 12 tests\ntest parse::nested ... FAILED\nthread 'parse::nested' panicked at src/parse.rs:42:9:\nassertion `left == right` failed\nexit status 101".to_owned())
        })
    }
}

/// The `path` argument inside this crate (no `..`: the model's text is data, not a path
/// out of the project).
fn project_path(arguments: &Value) -> Result<std::path::PathBuf, String> {
    let path = arguments["path"]
        .as_str()
        .ok_or("`path` must be a string")?;
    if path.split('/').any(|c| c == "..") || path.starts_with('/') {
        return Err(format!("{path}: only paths inside the project"));
    }
    Ok(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
}

static TURNS: AtomicUsize = AtomicUsize::new(0);
static SUMMARIES: AtomicUsize = AtomicUsize::new(0);

/// The stand-in model: summary requests get a summary (the second one a 500, to show the
/// fallback); agent turns get the next scripted tool call, after checking the request.
fn scripted_model(request: &Request) -> Option<Answer> {
    let body = request.json();
    let system = body["messages"][0]["content"].as_str().unwrap_or("");
    if system.starts_with("You compress") {
        let n = SUMMARIES.fetch_add(1, Ordering::SeqCst);
        if n == 1 {
            return Some(Answer::Status(
                500,
                r#"{"error":{"message":"overloaded"}}"#.into(),
            ));
        }
        return Some(Answer::completion(
            "Stand-in summary: looked through the sources; `parse::nested` fails at src/parse.rs:42:9 (exit status 101).",
        ));
    }
    if let Err(e) = validate_openai_strict(&body["messages"]) {
        return Some(Answer::Status(
            400,
            json!({"error": {"message": e.to_string()}}).to_string(),
        ));
    }
    let turn = TURNS.fetch_add(1, Ordering::SeqCst);
    let call =
        |name: &str, args: Value| Some(Answer::tool_call(&format!("call_{turn}"), name, args));
    match turn {
        0 => call("list_dir", json!({"path": "src"})),
        1 => call("run_tests", json!({})),
        2 => call("read_file", json!({"path": "src/lib.rs"})),
        3 => call("read_file", json!({"path": "src/history/mod.rs"})),
        4 => call("read_file", json!({"path": "src/compact/compactor.rs"})),
        5 => call("read_file", json!({"path": "src/compact/plan.rs"})),
        6 => call("recall", json!({"id": 3})),
        7 => call("read_file", json!({"path": "src/history/view.rs"})),
        8 => call("run_tests", json!({})),
        _ => Some(Answer::completion(
            "The failure is in parse::nested (src/parse.rs:42:9): the nested case is not handled.",
        )),
    }
}
