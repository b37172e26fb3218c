//! The agent of `docs/agent.md`, run on every store: one `agent<S: AsyncStore>` function,
//! on the in-memory history, the journal, SQLite and PostgreSQL, killed mid-run and
//! resumed; every store ends with the same history, the same usage (the tools budgeted)
//! and the same compactions as the run never killed. The code between the markers is the
//! page's code block, checked by `docs_agent_md_shows_this_code`.

// docs/agent.md: begin
use std::future::Future;

use favur_context::compact::AsyncSummarizer;
use favur_context::render::render_openai;
use favur_context::reply::Reply;
use favur_context::store::NewEntry;
use favur_context::tools::ToolSet;
use favur_context::{AsyncStore, Compactor, ToolCall, fuzzy, strict};
use serde_json::{Value, json};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The model: any client that answers an OpenAI Chat request (`messages` and `tools`).
pub trait Model {
    fn complete(&mut self, request: Value) -> impl Future<Output = Result<Reply, BoxError>>;
}

/// What a new session holds, written once, in one batch, by every store's
/// `open_or_create`: the pins. Pin what must be sent verbatim in every request, whatever
/// compaction does: the system prompt and the task (a standing instruction a person gave
/// too); everything else is appended with its class.
pub fn setup() -> Vec<NewEntry> {
    vec![
        NewEntry::pinned(strict!(system: "You are a careful coding agent. Use the tools.")),
        NewEntry::pinned(strict!(user: "The parser test fails. Find out why and fix it.")),
    ]
}

/// The whole loop, on any store, fresh or reopened after a kill: it budgets the tools'
/// definitions (recorded once; the same value again writes nothing), answers the calls a
/// kill left open, then asks the model until it answers without calls.
pub async fn agent<S: AsyncStore>(
    store: &mut S,
    model: &mut impl Model,
    tools: &ToolSet,
    compactor: &mut Compactor<impl AsyncSummarizer>,
) -> Result<String, BoxError> {
    store.budget_tools(tools).await?;
    let open: Vec<ToolCall> = store
        .history()
        .pending_calls()
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    answer(store, tools, &open).await?;
    loop {
        compactor.prepare_async(store).await?; // compacts by class, recorded by the store
        let messages = render_openai(store.history());
        let reply = model
            .complete(json!({"messages": messages, "tools": tools.openai_tools()}))
            .await?;
        let (calls, text) = (reply.tool_calls(), reply.text());
        store.append(fuzzy!(message: reply)).await?;
        if calls.is_empty() {
            return Ok(text);
        }
        answer(store, tools, &calls).await?;
    }
}

/// Runs `calls` and records their results in one batch (all or none).
async fn answer<S: AsyncStore>(
    store: &mut S,
    tools: &ToolSet,
    calls: &[ToolCall],
) -> Result<(), BoxError> {
    let results = tools.run_all(calls, store.history()).await;
    store
        .record(results.into_iter().map(NewEntry::appended).collect())
        .await?;
    Ok(())
}
// docs/agent.md: end

mod common;

use favur_context::compact::{BuiltinSummarizer, Ready};
use favur_context::journal::JournaledHistory;
use favur_context::tools::{AsyncTool, ToolFuture};
use favur_context::{History, Retention, retention};

/// Shows a file: long, so the window fills and the loop compacts.
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
            let path = arguments["path"].as_str().unwrap_or("?");
            Ok(format!(
                "// {path}\n{}",
                "fn parse(input: &str) -> Tree { todo!() }\n".repeat(12)
            ))
        })
    }
}

/// The test run: a failure whose trace must stay exact.
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
            Err("test parse::nested ... FAILED\npanicked at src/parse.rs:42:9".to_owned())
        })
    }
}

fn tools() -> ToolSet {
    ToolSet::new(Retention::Strict)
        .with(ReadFile)
        .and_then(|t| t.with(RunTests))
        .and_then(|t| t.with_recall(Retention::Fuzzy))
        .expect("three distinct tools")
}

fn compactor() -> Compactor<Ready<BuiltinSummarizer>> {
    common::builtin_compactor(20_000, 500)
}

/// How many steps the scripted model takes before it answers.
const STEPS: usize = 30;

/// The scripted model: step `k` reads `src/k.rs` (every fourth step runs the tests),
/// then it answers; it fails once at step `fail_at` (the process is killed there).
struct Scripted {
    step: usize,
    fail_at: Option<usize>,
}

impl Model for Scripted {
    async fn complete(&mut self, request: Value) -> Result<Reply, BoxError> {
        favur_context::render::validate::validate_openai_strict(&request["messages"])?;
        if self.fail_at.take_if(|at| *at == self.step).is_some() {
            return Err("killed".into());
        }
        let k = self.step;
        self.step += 1;
        let message = if k == STEPS {
            json!({"role": "assistant", "content": "Fixed: nested input now parses."})
        } else {
            let (name, args) = match k % 4 {
                3 => ("run_tests", json!({})),
                _ => ("read_file", json!({"path": format!("src/{k}.rs")})),
            };
            let call = json!({"id": format!("call_{k}"), "type": "function",
                "function": {"name": name, "arguments": args.to_string()}});
            json!({"role": "assistant", "content": null, "tool_calls": [call]})
        };
        let body = json!({"choices": [{"message": message, "finish_reason": "stop"}]});
        Ok(Reply::from_openai(&body.to_string())?)
    }
}

/// Runs `f` to completion on a fresh current-thread runtime.
fn block_on<F: Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(f)
}

/// Asserts that `a` is the history `b` is: view, ids, pins, compactions, usage.
fn assert_same(a: &History, b: &History, what: &str) {
    assert_eq!(a.view(), b.view(), "{what}: view");
    assert_eq!(a.next_id(), b.next_id(), "{what}: next id");
    assert_eq!(a.pinned(), b.pinned(), "{what}: pinned");
    assert_eq!(a.compactions(), b.compactions(), "{what}: compactions");
    assert_eq!(
        a.request_overhead_tokens(),
        b.request_overhead_tokens(),
        "{what}: overhead"
    );
    assert_eq!(a.usage_tokens(), b.usage_tokens(), "{what}: usage");
}

/// The run never killed, on the in-memory history: what every store must end with.
fn uninterrupted() -> (History, String) {
    let mut memory = History::new();
    block_on(favur_context::AsyncStore::record(&mut memory, setup())).unwrap();
    let mut model = Scripted {
        step: 0,
        fail_at: None,
    };
    let answer = block_on(agent(&mut memory, &mut model, &tools(), &mut compactor())).unwrap();
    (memory, answer)
}

/// Kills a run of `store` twice: once when the model fails at step 7 (nothing pending),
/// once right after the reply of step 19 was recorded and before its results (a call left
/// open). `reopen` drops what it is given (the kill) and opens the store again.
async fn killed_twice<S: AsyncStore>(mut store: S, reopen: impl AsyncFn(S) -> S) -> (S, String) {
    let tools = tools();
    let mut model = Scripted {
        step: 0,
        fail_at: Some(7),
    };
    let err = agent(&mut store, &mut model, &tools, &mut compactor())
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "killed");
    let mut store = reopen(store).await;
    model.fail_at = Some(19);
    agent(&mut store, &mut model, &tools, &mut compactor())
        .await
        .unwrap_err();
    compactor().prepare_async(&mut store).await.unwrap();
    let messages = render_openai(store.history());
    let reply = model.complete(json!({"messages": messages})).await.unwrap();
    store.append(fuzzy!(message: reply)).await.unwrap();
    let mut store = reopen(store).await;
    assert_eq!(
        store.history().pending_calls().len(),
        1,
        "the kill left a call open"
    );
    let answer = agent(&mut store, &mut model, &tools, &mut compactor())
        .await
        .unwrap();
    (store, answer)
}

#[test]
fn one_agent_runs_killed_and_resumed_to_the_same_history_on_every_store() {
    let (memory, expected) = uninterrupted();
    assert_eq!(expected, "Fixed: nested input now parses.");
    assert_eq!(memory.pinned().len(), 2, "the system prompt and the task");
    assert!(
        memory.compactions().len() >= 2,
        "{} compactions",
        memory.compactions().len()
    );
    assert_eq!(
        memory.request_overhead_tokens(),
        tools().definitions_tokens(memory.counter())
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job-42.jsonl");
    let journal = JournaledHistory::open_or_create(&path, setup).unwrap();
    let (journal, answer) = block_on(killed_twice(journal, async |j: JournaledHistory| {
        drop(j); // a killed process lets go of the journal's lock
        JournaledHistory::open_or_create(&path, setup).unwrap()
    }));
    assert_eq!(answer, expected);
    assert_same(journal.history(), &memory, "journal");

    #[cfg(feature = "sqlite")]
    {
        use favur_context::store::{SessionOptions, SqliteStore};
        let db = dir.path().join("agents.sqlite");
        let options = SessionOptions::new().owner("worker-1");
        let open = || SqliteStore::open_or_create(&db, "job-42", &options, setup).unwrap();
        let (sqlite, answer) = block_on(killed_twice(open(), async |s: SqliteStore| {
            std::mem::forget(s); // killed: the claim is not released; the same owner takes it back
            open()
        }));
        assert_eq!(answer, expected);
        assert_same(sqlite.history(), &memory, "sqlite");
    }

    #[cfg(feature = "postgres")]
    favur_context_tests::pg::with_server("agent on postgres", |server| {
        use favur_context::store::{PgStore, SessionOptions};
        let config = server.config();
        let options = SessionOptions::new().owner("worker-1");
        let open = async || {
            PgStore::open_or_create(&config, "job-42", &options, setup)
                .await
                .unwrap()
        };
        block_on(async {
            let pg = open().await;
            let (pg, answer) = killed_twice(pg, async |p: PgStore| {
                std::mem::forget(p); // killed: the claim is not released
                open().await
            })
            .await;
            assert_eq!(answer, expected);
            assert_same(pg.history(), &memory, "postgres");
            pg.close().await.unwrap();
        });
    });
}

#[test]
fn docs_agent_md_shows_this_code() {
    let source = include_str!("agent_doc.rs");
    let begin = "// docs/agent.md: begin\n";
    let start = source.find(begin).unwrap() + begin.len();
    let end = source.find("// docs/agent.md: end").unwrap();
    let code = &source[start..end];
    let page = include_str!("../../docs/agent.md");
    let block = page
        .split("```rust")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a rust code block");
    assert_eq!(
        block.trim(),
        code.trim(),
        "docs/agent.md's code block is this file's agent"
    );
}
