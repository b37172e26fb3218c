//! Gemini through the proxy: a real shared trace sent as Gemini `generateContent` and
//! `streamGenerateContent` requests is compacted as the engine compacts the same
//! transcript run directly, every upstream request valid Gemini that holds the task;
//! answers (JSON, `alt=sse` events, the streamed JSON array) reach the client byte for
//! byte; the API key reaches the Gemini upstream and nothing else; Google's other paths
//! and requests with a Gemini key pass through untouched; a transcript that cannot be
//! imported is refused with nothing sent or recorded; an unreachable Gemini upstream is a
//! 502 that does not echo the key.

mod common;

use std::process::{Child, Command, Stdio};

use common::{Direct, Upstream, holds, request_points, start_with, test_policy, to_gemini, trace};
use favur_context::import::Format;
use favur_context::render::{GeminiOptions, PLACEHOLDER_THOUGHT_SIGNATURE, render_gemini_with};
use favur_context_proxy::config::{Config, StoreSpec};
use favur_context_proxy::wire::Wire;
use futures_util::StreamExt;
use serde_json::{Value, json};

/// The key the tests send; it must reach the Gemini upstream and nothing else.
const KEY: &str = "AIzaSy-test-key-0123456789abcdef";

/// A proxy whose OpenAI and Anthropic upstream is `other` and Gemini upstream `gemini`.
async fn proxy(other: &Upstream, gemini: &Upstream, store: StoreSpec) -> String {
    let mut config = Config::new(&other.url, &other.url).unwrap();
    config.gemini_upstream = gemini.url.clone();
    config.policy = test_policy();
    config.store = store;
    start_with(config).await
}

/// How a request carries the key.
#[derive(Clone, Copy)]
enum KeyIn {
    Header,
    Query,
}

/// Sends `body` to `url` (the key as `key_in` says); returns the status and the answer's
/// bytes.
async fn send(url: &str, key_in: KeyIn, body: &Value) -> (u16, bytes::Bytes) {
    let client = reqwest::Client::new();
    let r = match key_in {
        KeyIn::Header => client.post(url).header("x-goog-api-key", KEY),
        KeyIn::Query => {
            let sep = if url.contains('?') { '&' } else { '?' };
            client.post(format!("{url}{sep}key={KEY}"))
        }
    };
    let r = r.json(body).send().await.unwrap();
    (r.status().as_u16(), r.bytes().await.unwrap())
}

/// The tool the trace's agent calls, declared as a Gemini client declares it.
fn tools() -> Value {
    json!([{"functionDeclarations": [{"name": "bash", "description": "Run a shell command",
        "parameters": {"type": "OBJECT", "properties": {"command": {"type": "STRING"}}, "required": ["command"]}}]}])
}

/// The request overhead the proxy counts for a Gemini body, by the default counter.
fn overhead(body: &Value) -> u64 {
    use favur_context::tokens::TokenCounter;
    let text = Wire::Gemini.overhead_text(body);
    assert!(!text.is_empty(), "the tools are overhead");
    u64::from(favur_context::tokens::HeuristicCounter.count_text(&text))
}

/// How many parts of `contents` carry a thought signature that `which` picks.
fn signatures(contents: &Value, which: impl Fn(&str) -> bool) -> usize {
    contents
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().into_iter().flatten())
        .filter(|p| p["thoughtSignature"].as_str().is_some_and(&which))
        .count()
}

/// What Gemini 3 returns and a client sends back: a thought summary first in each model
/// turn, and a thought signature on its first call.
fn sign(contents: &mut [Value]) {
    for (n, turn) in contents.iter_mut().enumerate() {
        if turn["role"] != "model" {
            continue;
        }
        let parts = turn["parts"].as_array_mut().unwrap();
        if let Some(call) = parts.iter_mut().find(|p| p.get("functionCall").is_some()) {
            call["thoughtSignature"] = json!(format!("c2lnbmF0dXJl-{n}"));
        }
        parts.insert(
            0,
            json!({"text": format!("**Planning** step {n}"), "thought": true}),
        );
    }
}

/// How a trace is sent: to which path (with its query), for which model, the key where,
/// Gemini 3's signatures and thoughts in the transcript or not, and whether to the
/// proxy's binary on a journal, killed (SIGKILL) and started again after that many
/// requests (else to a proxy in this process, sessions in memory).
struct Run<'a> {
    path_query: &'a str,
    model: &'a str,
    key_in: KeyIn,
    signed: bool,
    kill_at: Option<usize>,
}

/// A child process killed (SIGKILL) when dropped, so that a failing test leaves no proxy
/// running behind it.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The proxy's binary on a free port with the journal and policy in `dir`, OpenAI and
/// Anthropic to `other`, Gemini to `gemini`; returns it and its URL.
fn spawn(other: &Upstream, gemini: &Upstream, dir: &std::path::Path) -> (Killed, String) {
    spawn_logging(other, gemini, dir, "warn")
}

/// [`spawn`] with `RUST_LOG=log`, its log written to `dir/proxy.log`.
fn spawn_logging(
    other: &Upstream,
    gemini: &Upstream,
    dir: &std::path::Path,
    log: &str,
) -> (Killed, String) {
    let policy = dir.join("policy.toml");
    std::fs::write(&policy, test_policy().to_toml_string()).unwrap();
    let store = format!("journal:{}", dir.join("sessions").display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_favur-context-proxy"))
        .args(["--listen", "127.0.0.1:0", "--openai-upstream", &other.url])
        .args([
            "--anthropic-upstream",
            &other.url,
            "--gemini-upstream",
            &gemini.url,
        ])
        .args(["--store", &store, "--policy"])
        .arg(&policy)
        .env("RUST_LOG", log)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("proxy.log")).unwrap())
        .spawn()
        .unwrap();
    let url = common::listening_url(&mut child);
    (Killed(child), url)
}

/// Sends the pvlib trace as Gemini requests as `run` says and checks every request the
/// Gemini upstream received against the engine run directly on the same transcripts.
/// Returns how many parts sent upstream carried the placeholder signature and how many a
/// signature of the transcript, or `None` without the traces.
async fn trace_through(run: Run<'_>) -> Option<(usize, usize)> {
    let Run {
        path_query,
        model,
        key_in,
        ..
    } = run;
    let trace = trace("pvlib__pvlib-python-1154")?;
    let task: String = trace[1]["content"]
        .as_str()
        .unwrap()
        .chars()
        .take(200)
        .collect();
    let (other, gemini) = (Upstream::start().await, Upstream::start().await);
    let dir = tempfile::tempdir().unwrap();
    let mut child: Option<Killed> = None;
    let mut proxy = match run.kill_at {
        None => proxy(&other, &gemini, StoreSpec::Memory).await,
        Some(_) => {
            let (c, url) = spawn(&other, &gemini, dir.path());
            child = Some(c);
            url
        }
    };
    let (system, mut contents) = to_gemini(&trace);
    if run.signed {
        sign(&mut contents);
    }
    let options = GeminiOptions::for_model(model);
    let (mut direct, mut expected, mut answers) = (Direct::new(), Vec::new(), Vec::new());
    for (n, i) in request_points(&contents, |c| c["role"] == "model")
        .into_iter()
        .enumerate()
    {
        if run.kill_at == Some(n) {
            drop(child.take()); // SIGKILL, mid-session
            let (c, url) = spawn(&other, &gemini, dir.path());
            (child, proxy) = (Some(c), url);
        }
        let body = json!({"systemInstruction": {"parts": [{"text": system}]},
            "contents": &contents[..i], "tools": tools(),
            "generationConfig": {"temperature": 0.0, "thinkingConfig": {"includeThoughts": true}},
            "safetySettings": [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "threshold": "BLOCK_NONE"}],
            "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
            "cachedContent": "cachedContents/pvlib-1"});
        direct.step(Format::Gemini, &body, overhead(&body));
        expected.push(render_gemini_with(&direct.history, &options));
        let (status, answer) = send(&format!("{proxy}{path_query}"), key_in, &body).await;
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
        answers.push(answer);
    }
    assert!(
        direct.compactions >= 2,
        "the trace should reach several tiers: {}",
        direct.compactions
    );
    assert!(other.seen().is_empty(), "a Gemini request went elsewhere");
    let seen = gemini.seen_valid(expected.len(), "invalid Gemini sent");
    let (path, query) = path_query.split_once('?').unwrap_or((path_query, ""));
    let (mut placeholder, mut signed) = (0, 0);
    for (i, ((s, want), answer)) in seen.iter().zip(&expected).zip(&answers).enumerate() {
        let got: Value = serde_json::from_slice(&s.body).unwrap();
        for key in ["contents", "systemInstruction"] {
            let differs = common::first_difference(&got[key], &want[key]);
            assert!(
                differs.is_none(),
                "request {i}: `{key}` differs from the direct run at {differs:?}"
            );
        }
        assert!(holds(&got["contents"], &task), "request {i} lost the task");
        assert_eq!(
            got["tools"],
            tools(),
            "request {i}: the client's tools are kept"
        );
        assert_eq!(
            got["generationConfig"]["thinkingConfig"]["includeThoughts"],
            true
        );
        assert_eq!(got["safetySettings"][0]["threshold"], "BLOCK_NONE");
        assert_eq!(got["toolConfig"]["functionCallingConfig"]["mode"], "AUTO");
        assert_eq!(got["cachedContent"], "cachedContents/pvlib-1");
        assert_eq!(s.path, path);
        assert_eq!(
            &s.answer, answer,
            "answer {i} was not passed through byte for byte"
        );
        match key_in {
            KeyIn::Header => assert_eq!(s.headers["x-goog-api-key"], KEY),
            KeyIn::Query => {
                let q = s.query.as_deref().unwrap();
                assert!(
                    q.starts_with(query) && q.ends_with(&format!("key={KEY}")),
                    "{q}"
                );
            }
        }
        placeholder += signatures(&got["contents"], |s| s == PLACEHOLDER_THOUGHT_SIGNATURE);
        signed += signatures(&got["contents"], |s| s.starts_with("c2lnbmF0dXJl-"));
    }
    eprintln!(
        "{path_query}: {} requests, {} compactions, {placeholder} placeholder and {signed} \
         client signatures sent",
        seen.len(),
        direct.compactions
    );
    let branches = common::recorded_sessions(&proxy).await;
    drop(child);
    assert_eq!(
        branches.as_array().unwrap().len(),
        1,
        "one session, one branch: {branches}"
    );
    Some((placeholder, signed))
}

/// Streamed to Gemini 3 as SSE, and to Gemini 2.5 on `v1` as a JSON array: each compacted
/// as the engine would. Every Gemini 3 request's current turn holds the call the agent
/// made last, without a signature of its own: Gemini 3 refuses it without the documented
/// placeholder, which Gemini 2.5 is never sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_streams_are_compacted_as_the_engine_would_with_placeholders_for_gemini_3_only() {
    for (path_query, model, key_in, gemini_3) in [
        (
            "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse",
            "gemini-3-pro-preview",
            KeyIn::Header,
            true,
        ),
        (
            "/v1/models/gemini-2.5-flash:streamGenerateContent",
            "gemini-2.5-flash",
            KeyIn::Query,
            false,
        ),
    ] {
        let run = Run {
            path_query,
            model,
            key_in,
            signed: false,
            kill_at: None,
        };
        let Some((placeholder, _)) = trace_through(run).await else {
            return;
        };
        if gemini_3 {
            assert!(
                placeholder > 0,
                "no placeholder signature on a Gemini 3 request"
            );
        } else {
            assert_eq!(placeholder, 0, "a placeholder signature sent to Gemini 2.5");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_3_thoughts_and_signatures_survive_a_sigkill_of_the_binary() {
    let run = Run {
        path_query: "/v1beta/models/gemini-3-pro-preview:generateContent",
        model: "gemini-3-pro-preview",
        key_in: KeyIn::Header,
        signed: true,
        kill_at: Some(30),
    };
    let Some((_, signed)) = trace_through(run).await else {
        return;
    };
    // The client's signatures go back verbatim (with the calls compaction kept), and the
    // binary started again found the recorded session: one branch, the same requests.
    assert!(signed > 0, "no signature of the transcript was sent back");
}

/// The bytes of a streamed answer as the client reads them, and in how many pieces.
async fn streamed(url: String, body: &Value) -> (Vec<u8>, usize) {
    let r = reqwest::Client::new()
        .post(url)
        .header("x-goog-api-key", KEY)
        .json(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let mut stream = r.bytes_stream();
    let (mut got, mut pieces) = (Vec::new(), 0);
    while let Some(chunk) = stream.next().await {
        got.extend_from_slice(&chunk.unwrap());
        pieces += 1;
    }
    (got, pieces)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_stream_forms_arrive_piece_by_piece_and_byte_for_byte() {
    let (other, gemini) = (Upstream::start().await, Upstream::start().await);
    let proxy = proxy(&other, &gemini, StoreSpec::Memory).await;
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "stream please"}]}]});
    let base = format!("{proxy}/v1beta/models/gemini-2.5-flash:streamGenerateContent");
    let (sse, sse_pieces) = streamed(format!("{base}?alt=sse"), &body).await;
    let (array, array_pieces) = streamed(base, &body).await;
    let seen = gemini.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(sse, seen[0].answer.to_vec());
    assert!(String::from_utf8(sse).unwrap().starts_with("data: {"));
    assert_eq!(array, seen[1].answer.to_vec());
    let array: Value = serde_json::from_slice(&array).unwrap();
    assert_eq!(
        array.as_array().unwrap().len(),
        2,
        "the JSON-array stream form"
    );
    // The scripted upstream pauses before each piece: a proxy that buffered would
    // deliver each answer in one.
    assert!(
        sse_pieces >= 2 && array_pieces >= 2,
        "{sse_pieces} {array_pieces}"
    );
    assert!(other.seen().is_empty());
}

/// A request to the proxy: method, path and query, Gemini key header or not, body.
async fn raw(proxy: &str, method: &str, path: &str, key: bool, body: &str) -> (u16, bytes::Bytes) {
    let client = reqwest::Client::new();
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut r = client.request(method, format!("{proxy}{path}"));
    if key {
        r = r.header("x-goog-api-key", KEY);
    }
    let r = r
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.bytes().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn google_paths_and_gemini_keys_go_to_gemini_untouched_and_openai_paths_do_not() {
    let (other, gemini) = (Upstream::start().await, Upstream::start().await);
    let dir = tempfile::tempdir().unwrap();
    let proxy = proxy(&other, &gemini, StoreSpec::Journal(dir.path().into())).await;
    let chat = r#"{"model": "m", "messages": [{"role": "user", "content": "hi"}]}"#;
    let count = r#"{"contents": [{"role": "user", "parts": [{"text": "count me"}]}]}"#;
    let generate = r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[]}"#;
    let listing = format!("/v1beta/models?key={KEY}&pageSize=5");
    // (method, path, Gemini key header, body, whether Gemini's upstream gets it)
    let cases = [
        ("POST", "/v1/chat/completions", false, chat, false),
        (
            "POST",
            "/v1/models/gemini-2.5-flash:generateContent",
            true,
            generate,
            true,
        ),
        ("GET", "/v1/models", false, "", false),
        ("GET", listing.as_str(), false, "", true),
        (
            "POST",
            "/v1beta/models/gemini-2.5-flash:countTokens",
            true,
            count,
            true,
        ),
        (
            "POST",
            "/upload/v1beta/files?uploadType=multipart",
            true,
            "{\"file\": {}}",
            true,
        ),
        ("GET", "/v1/models", true, "", true),
        ("POST", "/v1/chat/completions", true, chat, true),
        (
            "GET",
            "/v1/models/ft:gpt-4o-mini:org::abc",
            false,
            "",
            false,
        ),
        (
            "POST",
            "/v1/models/gemini-2.5-flash:embedContent",
            false,
            count,
            true,
        ),
    ];
    for (method, path, key, body, _) in &cases {
        let (status, _) = raw(&proxy, method, path, *key, body).await;
        assert_eq!(status, 200, "{method} {path}");
    }
    let (want_gemini, want_other): (Vec<_>, Vec<_>) = cases.iter().partition(|c| c.4);
    let (seen_gemini, seen_other) = (gemini.seen(), other.seen());
    let paths = |s: &[common::upstream::Seen]| s.iter().map(|s| s.path.clone()).collect::<Vec<_>>();
    let want = |w: &[&(&str, &str, bool, &str, bool)]| {
        w.iter()
            .map(|c| c.1.split('?').next().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(paths(&seen_gemini), want(&want_gemini));
    assert_eq!(paths(&seen_other), want(&want_other));
    // Untouched: every Gemini-bound body but the compacted call's is the client's bytes
    // (that one is re-rendered: compare its value).
    for (s, c) in seen_gemini.iter().zip(&want_gemini) {
        if c.1.ends_with(":generateContent") {
            let (a, b): (Value, Value) = (
                serde_json::from_slice(&s.body).unwrap(),
                serde_json::from_str(c.3).unwrap(),
            );
            assert_eq!(a, b);
        } else {
            assert_eq!(s.body, c.3.as_bytes(), "{} was changed", c.1);
        }
    }
    assert_eq!(
        seen_gemini[1].query.as_deref(),
        Some(&*format!("key={KEY}&pageSize=5"))
    );
    // The key reaches the Gemini upstream only, and is not stored nor shown.
    for s in &seen_other {
        assert!(!s.headers.contains_key("x-goog-api-key"));
        assert!(!s.query.as_deref().unwrap_or("").contains(KEY));
    }
    let sessions = reqwest::get(format!("{proxy}/favur/sessions"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!sessions.contains(KEY));
    assert!(
        sessions.contains("\"messages\":1"),
        "the two compacted calls were recorded: {sessions}"
    );
    let mut files = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains(KEY), "the key was stored");
        files += 1;
    }
    assert!(files >= 2, "the sessions were journaled: {files} files");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_transcript_that_cannot_be_imported_is_refused_and_nothing_is_recorded() {
    let (other, gemini) = (Upstream::start().await, Upstream::start().await);
    let proxy = proxy(&other, &gemini, StoreSpec::Memory).await;
    let orphan = json!({"contents": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "hello"}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "bash", "response": {"output": "x"}}}]}]});
    let url = format!("{proxy}/v1beta/models/gemini-2.5-flash:generateContent");
    let (status, body) = send(&url, KeyIn::Header, &orphan).await;
    assert_eq!(status, 422, "{}", String::from_utf8_lossy(&body));
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["error"]["code"], "transcript_not_importable");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("message 2"),
        "{body}"
    );
    assert!(
        gemini.seen().is_empty() && other.seen().is_empty(),
        "nothing is sent"
    );
    let sessions: Value = common::recorded_sessions(&proxy).await;
    assert_eq!(sessions, json!([]), "nothing is recorded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snake_case_and_role_less_bodies_are_kept_as_google_reads_them() {
    let (other, gemini) = (Upstream::start().await, Upstream::start().await);
    let proxy = proxy(&other, &gemini, StoreSpec::Memory).await;
    let url = format!("{proxy}/v1beta/models/gemini-2.5-flash:generateContent");
    // `system_instruction` (snake case) is read as the system prompt and sent once, as
    // `systemInstruction`.
    let snake = json!({"system_instruction": {"parts": [{"text": "be brief"}]},
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    assert_eq!(send(&url, KeyIn::Header, &snake).await.0, 200);
    // A prompt without roles is passed through as it came.
    let bare = r#"{"contents": [{"parts": [{"text": "hi"}]}]}"#;
    let (status, _) = raw(
        &proxy,
        "POST",
        "/v1beta/models/gemini-2.5-flash:generateContent",
        true,
        bare,
    )
    .await;
    assert_eq!(status, 200);
    let seen = gemini.seen();
    let sent: Value = serde_json::from_slice(&seen[0].body).unwrap();
    assert_eq!(sent["systemInstruction"]["parts"][0]["text"], "be brief");
    assert!(sent.get("system_instruction").is_none());
    favur_context::render::validate::validate_gemini_strict(&sent).unwrap();
    // (The library's strict validator wants roles, which Google does not: the upstream
    // flags the client's own body, passed through as it came.)
    assert_eq!(seen[1].body, bare.as_bytes());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_gemini_upstream_is_a_502_that_does_not_echo_the_key() {
    let other = Upstream::start().await;
    let mut config = Config::new(&other.url, &other.url).unwrap();
    config.gemini_upstream = "http://127.0.0.1:9".into(); // nothing listens there
    let proxy = start_with(config).await;
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    let url = format!("{proxy}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    let (status, answer) = send(&url, KeyIn::Query, &body).await;
    let answer = String::from_utf8(answer.to_vec()).unwrap();
    assert_eq!(status, 502, "{answer}");
    assert!(answer.contains("upstream_unreachable"), "{answer}");
    assert!(!answer.contains(KEY), "the key was echoed: {answer}");
    assert!(
        other.seen().is_empty(),
        "nothing went to the other upstream"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_is_not_in_the_binarys_debug_log() {
    let (other, gemini) = (Upstream::start().await, Upstream::start().await);
    let dir = tempfile::tempdir().unwrap();
    let (child, proxy) = spawn_logging(&other, &gemini, dir.path(), "debug");
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    let generate = format!("{proxy}/v1beta/models/gemini-2.5-flash:generateContent");
    assert_eq!(send(&generate, KeyIn::Header, &body).await.0, 200);
    assert_eq!(send(&generate, KeyIn::Query, &body).await.0, 200);
    let orphan = json!({"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "x", "response": {}}}]}]});
    assert_eq!(send(&generate, KeyIn::Query, &orphan).await.0, 422);
    drop(child);
    let log = std::fs::read_to_string(dir.path().join("proxy.log")).unwrap();
    assert!(
        log.contains("request compacted"),
        "the debug log was written: {log}"
    );
    assert!(log.contains("request refused"), "{log}");
    assert!(!log.contains(KEY), "the key was logged");
    assert_eq!(gemini.seen().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_openai_compatible_chat_is_compacted_and_goes_to_gemini() {
    let Some(trace) = trace("django__django-12858") else {
        return;
    };
    let (other, gemini) = (Upstream::start().await, Upstream::start().await);
    let proxy = proxy(&other, &gemini, StoreSpec::Memory).await;
    let chat = common::to_chat(&trace);
    let client = reqwest::Client::new();
    let (mut direct, mut expected) = (Direct::new(), Vec::new());
    for i in request_points(&chat, |m| m["role"] == "assistant") {
        let body = json!({"model": "gemini-2.5-flash", "messages": &chat[..i]});
        direct.step(Wire::Chat.format(&body), &body, 0);
        expected.push(favur_context::render::render_openai(&direct.history));
        let r = client
            .post(format!("{proxy}/v1beta/openai/chat/completions"))
            .header("authorization", format!("Bearer {KEY}"))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    assert!(direct.compactions >= 3, "{}", direct.compactions);
    assert!(
        other.seen().is_empty(),
        "nothing goes to the OpenAI upstream"
    );
    assert_eq!(gemini.invalid(), Vec::<String>::new());
    let seen = gemini.seen();
    assert_eq!(seen.len(), expected.len());
    let task: String = chat[1]["content"]
        .as_str()
        .unwrap()
        .chars()
        .take(200)
        .collect();
    for (i, (s, want)) in seen.iter().zip(&expected).enumerate() {
        assert_eq!(s.path, "/v1beta/openai/chat/completions");
        let got: Value = serde_json::from_slice(&s.body).unwrap();
        assert_eq!(
            &got["messages"], want,
            "request {i} differs from the engine's"
        );
        assert_eq!(got["model"], "gemini-2.5-flash");
        assert!(holds(&got, &task), "request {i} lost the task");
        let auth = s.headers.get("authorization").unwrap();
        assert_eq!(auth.to_str().unwrap(), format!("Bearer {KEY}"));
    }
    let sent = |s: &common::upstream::Seen| s.body.len();
    let client_bytes = serde_json::to_vec(&json!({"messages": &chat}))
        .unwrap()
        .len();
    assert!(
        sent(seen.last().unwrap()) < client_bytes / 2,
        "the last request was compacted"
    );
}
