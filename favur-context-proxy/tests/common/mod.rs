//! What the proxy's tests share: a scripted upstream, the proxy started in-process or as
//! its binary, the shared traces turned into each wire format, and the engine run on the
//! same transcripts directly (what `replay` does) for comparison.
#![allow(dead_code)]

#[path = "../../../tests/tests/common/traces.rs"]
pub mod traces;
pub mod upstream;

use favur_context::compact::BuiltinSummarizer;
use favur_context::import::rules::Rules;
use favur_context::import::{Format, ParseOptions, parse_value};
use favur_context::store::NewEntry;
use favur_context::{Compactor, History, Policy, Store};
use favur_context_proxy::config::{Config, StoreSpec};
use serde_json::{Value, json};

pub use upstream::Upstream;

/// The policy the tests compact with: a 60k window, so that every tier is reached within
/// one of the shared traces.
pub fn test_policy() -> Policy {
    Policy::for_window(60_000).unwrap()
}

/// Starts the proxy in this process on a free loopback port; returns its base URL.
pub async fn start_proxy(upstream: &Upstream, store: StoreSpec) -> String {
    let mut config = test_config(upstream, store);
    config.gemini_upstream = upstream.url.clone();
    start_with(config).await
}

/// A proxy's configuration for the tests: `upstream` for OpenAI and Anthropic, the
/// [`test_policy`], sessions on `store`.
pub fn test_config(upstream: &Upstream, store: StoreSpec) -> Config {
    let mut config = Config::new(&upstream.url, &upstream.url).unwrap();
    config.policy = test_policy();
    config.store = store;
    config
}

pub async fn start_with(mut config: Config) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    config.listen = listener.local_addr().unwrap();
    let url = format!("http://{}", config.listen);
    tokio::spawn(favur_context_proxy::serve(config, listener));
    url
}

/// A shared trace's `messages`, or `None` (skipped, or failed in CI) without the traces.
/// POSTs `body` to the proxy's Chat Completions path.
pub async fn post_chat(proxy: &str, body: &Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{proxy}/v1/chat/completions"))
        .json(body)
        .send()
        .await
        .unwrap()
}

pub fn trace(name: &str) -> Option<Vec<Value>> {
    let dir = traces::traces_dir()?;
    let file = traces::trace_files(&dir)
        .into_iter()
        .find(|p| p.file_stem().is_some_and(|s| s == name))
        .unwrap_or_else(|| panic!("trace {name} is not in {}", dir.display()));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    Some(v["messages"].as_array().unwrap().clone())
}

/// The trace's messages as OpenAI Chat Completions messages (`exit` left out).
pub fn to_chat(trace: &[Value]) -> Vec<Value> {
    traces::chat_messages(trace, |c| c["arguments"].clone())
}

/// The calls of a trace's message `m` (none for a message without).
fn calls(m: &Value) -> impl Iterator<Item = &Value> {
    m.get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The trace as a system prompt and turns, for the formats that merge consecutive turns
/// of one role: `turn` gives a message's role and blocks from the message and its text;
/// the blocks go under `key` of the last turn when that has the same role.
fn merged_turns(
    trace: &[Value],
    key: &str,
    mut turn: impl FnMut(&Value, &str) -> (&'static str, Vec<Value>),
) -> (String, Vec<Value>) {
    let mut system = String::new();
    let mut turns: Vec<Value> = Vec::new();
    for m in trace.iter().filter(|m| m["role"] != "exit") {
        let text = m["content"].as_str().unwrap_or("");
        if m["role"] == "system" {
            system.push_str(text);
            continue;
        }
        let (role, blocks) = turn(m, text);
        match turns.last_mut() {
            Some(last) if last["role"] == role => {
                last[key].as_array_mut().unwrap().extend(blocks);
            }
            _ => {
                let mut next = json!({"role": role});
                next[key] = Value::Array(blocks);
                turns.push(next);
            }
        }
    }
    (system, turns)
}

/// The trace as an Anthropic request: `system` and alternating turns with `tool_use` and
/// `tool_result` blocks.
pub fn to_anthropic(trace: &[Value]) -> (String, Vec<Value>) {
    merged_turns(trace, "content", |m, text| {
        match m["role"].as_str().unwrap() {
            "assistant" => {
                let mut b = Vec::new();
                if !text.trim().is_empty() {
                    b.push(json!({"type": "text", "text": text}));
                }
                for c in calls(m) {
                    let input: Value =
                        serde_json::from_str(c["arguments"].as_str().unwrap()).unwrap();
                    b.push(json!({"type": "tool_use", "id": c["id"], "name": c["name"], "input": input}));
                }
                ("assistant", b)
            }
            "tool" => (
                "user",
                vec![
                    json!({"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": text}),
                ],
            ),
            _ => ("user", vec![json!({"type": "text", "text": text})]),
        }
    })
}

/// The trace as a Gemini request: the system prompt's text and `contents` of `user` and
/// `model` turns, calls as `functionCall` parts without ids (as Gemini returns them) and
/// their results as `functionResponse` parts (`{"output": text}`) of the next user turn.
pub fn to_gemini(trace: &[Value]) -> (String, Vec<Value>) {
    let mut names = std::collections::HashMap::new();
    merged_turns(trace, "parts", |m, text| {
        match m["role"].as_str().unwrap() {
            "assistant" => {
                let mut p = Vec::new();
                if !text.trim().is_empty() {
                    p.push(json!({"text": text}));
                }
                for c in calls(m) {
                    let args: Value =
                        serde_json::from_str(c["arguments"].as_str().unwrap()).unwrap();
                    names.insert(c["id"].as_str().unwrap().to_owned(), c["name"].clone());
                    p.push(json!({"functionCall": {"name": c["name"], "args": args}}));
                }
                ("model", p)
            }
            "tool" => {
                let name = &names[m["tool_call_id"].as_str().unwrap()];
                (
                    "user",
                    vec![json!({"functionResponse": {"name": name, "response": {"output": text}}})],
                )
            }
            _ => ("user", vec![json!({"text": text})]),
        }
    })
}

/// The trace as OpenAI Responses input items.
pub fn to_responses(trace: &[Value]) -> Vec<Value> {
    let mut items = Vec::new();
    for m in trace.iter().filter(|m| m["role"] != "exit") {
        let text = m["content"].as_str().unwrap_or("");
        match m["role"].as_str().unwrap() {
            "assistant" => {
                if !text.trim().is_empty() {
                    items.push(json!({"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}));
                }
                for c in calls(m) {
                    items.push(json!({"type": "function_call", "call_id": c["id"], "name": c["name"], "arguments": c["arguments"]}));
                }
            }
            "tool" => items.push(json!({"type": "function_call_output", "call_id": m["tool_call_id"], "output": text})),
            role => items.push(json!({"type": "message", "role": role, "content": text})),
        }
    }
    items
}

/// The request overhead the proxy counts for a body: its tool definitions and the like
/// ([`Wire::overhead_text`](favur_context_proxy::wire::Wire::overhead_text)), counted by
/// the histories' default counter.
pub fn overhead(body: &Value) -> u64 {
    use favur_context::tokens::TokenCounter;
    let text = favur_context_proxy::wire::Wire::Chat.overhead_text(body);
    if text.is_empty() {
        0
    } else {
        u64::from(favur_context::tokens::HeuristicCounter.count_text(&text))
    }
}

/// The OpenAI Responses requests of `trace`, one a request point (after a call or an
/// assistant message), run directly: the bodies, what the engine sends for each (its
/// `input`), and the run.
pub fn responses_requests(trace: &[Value]) -> (Vec<Value>, Vec<Value>, Direct) {
    let items = to_responses(trace);
    let reply = |m: &Value| {
        m["type"] == "function_call" || (m["type"] == "message" && m["role"] == "assistant")
    };
    let (mut direct, mut bodies, mut expected) = (Direct::new(), Vec::new(), Vec::new());
    for i in request_points(&items, reply) {
        let body = json!({"model": "m", "input": &items[..i]});
        direct.step(Format::Responses, &body, overhead(&body));
        expected.push(
            json!({"input": favur_context::render::render_responses(&direct.history)["input"]}),
        );
        bodies.push(body);
    }
    (bodies, expected, direct)
}

/// The indexes at which a request is made: before each assistant message (the prefix
/// `..i` is what the client sends).
pub fn request_points(list: &[Value], is_reply: impl Fn(&Value) -> bool) -> Vec<usize> {
    (1..list.len())
        .filter(|&i| is_reply(&list[i]) && !is_reply(&list[i - 1]))
        .collect()
}

/// The engine run directly on growing transcripts (what `favur-context replay` does):
/// one history, each transcript's new messages appended, `prepare` before each request.
pub struct Direct {
    pub history: History,
    compactor: Compactor<BuiltinSummarizer>,
    rules: Rules,
    recorded: usize,
    pub compactions: usize,
}

impl Direct {
    pub fn new() -> Direct {
        Direct {
            history: History::new(),
            compactor: Compactor::with_summarizer(test_policy(), BuiltinSummarizer::default()),
            rules: Rules::from_toml(favur_context_proxy::config::SHIPPED_RULES).unwrap(),
            recorded: 0,
            compactions: 0,
        }
    }

    /// Records what `transcript` (in `format`) adds and prepares the next request.
    pub fn step(&mut self, format: Format, transcript: &Value, overhead: u64) {
        let options = ParseOptions {
            keep_invalid_arguments: true,
        };
        let imported = parse_value(format, transcript, options)
            .unwrap()
            .classify(&self.rules)
            .unwrap();
        let new: Vec<NewEntry> = imported
            .into_iter()
            .skip(self.recorded)
            .map(NewEntry::from)
            .collect();
        self.recorded += new.len();
        if !new.is_empty() {
            self.history.record(new).unwrap();
        }
        self.history.set_request_overhead_tokens(overhead);
        let done = self.compactor.prepare(&mut self.history).unwrap();
        self.compactions += usize::from(done.compacted());
    }
}

/// Where two JSON values first differ, with both sides cut short (for assertions on
/// whole requests, which are too long to print).
pub fn first_difference(a: &Value, b: &Value) -> Option<String> {
    fn cut(v: &Value) -> String {
        let s = v.to_string();
        if s.chars().count() > 300 {
            format!("{}…", s.chars().take(300).collect::<String>())
        } else {
            s
        }
    }
    fn walk(a: &Value, b: &Value, path: &mut String) -> Option<String> {
        match (a, b) {
            (Value::Array(x), Value::Array(y)) => {
                for (i, (p, q)) in x.iter().zip(y).enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    if let Some(d) = walk(p, q, path) {
                        return Some(d);
                    }
                    path.truncate(len);
                }
                (x.len() != y.len()).then(|| format!("{path}: length {} vs {}", x.len(), y.len()))
            }
            (Value::Object(x), Value::Object(y)) => {
                for k in x.keys().chain(y.keys()) {
                    let len = path.len();
                    path.push_str(&format!(".{k}"));
                    let (p, q) = (
                        x.get(k).unwrap_or(&Value::Null),
                        y.get(k).unwrap_or(&Value::Null),
                    );
                    if let Some(d) = walk(p, q, path) {
                        return Some(d);
                    }
                    path.truncate(len);
                }
                None
            }
            _ => (a != b).then(|| format!("{path}: {} vs {}", cut(a), cut(b))),
        }
    }
    walk(a, b, &mut String::new())
}

/// Whether some string of `v` contains `text`.
pub fn holds(v: &Value, text: &str) -> bool {
    match v {
        Value::String(s) => s.contains(text),
        Value::Array(a) => a.iter().any(|x| holds(x, text)),
        Value::Object(o) => o.values().any(|x| holds(x, text)),
        _ => false,
    }
}

/// What the proxy's `/favur/sessions` endpoint reports.
pub async fn recorded_sessions(proxy: &str) -> Value {
    reqwest::get(format!("{proxy}/favur/sessions"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// The URL a proxy binary spawned with a piped stdout says it listens on (its first line).
pub fn listening_url(child: &mut std::process::Child) -> String {
    use std::io::{BufRead, BufReader};
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    line.trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("{line}"))
        .to_owned()
}
