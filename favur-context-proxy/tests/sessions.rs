//! Sessions: found by header or fingerprint, a rewound or edited transcript starts a new
//! branch and leaves the recorded one as it was, and a proxy killed mid-run (SIGKILL)
//! resumes every session from its store, sending exactly what it would have sent. The
//! PostgreSQL store runs on a throwaway server (`favur_context_tests::pg`): skipped
//! visibly where none can be had, a failure under CI.

mod common;

use std::process::{Child, Command, Stdio};

use common::{
    Direct, Upstream, post_chat, request_points, start_proxy, test_policy, to_chat, trace,
};
use favur_context::render::render_openai;
use favur_context_proxy::config::StoreSpec;
use favur_context_proxy::wire::Wire;
use favur_context_tests::pg::server_or_skip;
use serde_json::{Value, json};

async fn post(proxy: &str, body: &Value) -> Value {
    let r = post_chat(proxy, body).await;
    assert_eq!(r.status(), 200);
    r.json().await.unwrap()
}

/// Every request upstream saw is valid and carries the messages `expected` has, in order:
/// the requests of the run compared against (`than`).
fn assert_same_requests(upstream: &Upstream, expected: &[Value], than: &str) {
    assert_eq!(upstream.invalid(), Vec::<String>::new());
    let seen = upstream.seen();
    for (n, (seen, want)) in seen.iter().zip(expected).enumerate() {
        let got: Value = serde_json::from_slice(&seen.body).unwrap();
        assert_eq!(&got["messages"], want, "request {n} differs from {than}");
    }
    assert_eq!(seen.len(), expected.len());
}

async fn sessions(proxy: &str) -> Vec<Value> {
    let v: Value = common::recorded_sessions(proxy).await;
    v.as_array().unwrap().clone()
}

fn msgs(texts: &[(&str, &str)]) -> Value {
    Value::Array(
        texts
            .iter()
            .map(|(r, c)| json!({"role": r, "content": c}))
            .collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_transcript_starts_a_branch_and_the_recorded_one_continues() {
    let upstream = Upstream::start().await;
    let proxy = start_proxy(&upstream, StoreSpec::Memory).await;
    let a = [
        ("system", "sys"),
        ("user", "fix the bug in parse()"),
        ("assistant", "looking"),
        ("user", "output: ok"),
    ];
    post(&proxy, &json!({"model": "m", "messages": msgs(&a[..2])})).await;
    post(&proxy, &json!({"model": "m", "messages": msgs(&a)})).await;
    // The client rewinds and edits the reply it got.
    let b = [
        a[0],
        a[1],
        ("assistant", "looking again"),
        ("user", "output: fail"),
    ];
    post(&proxy, &json!({"model": "m", "messages": msgs(&b)})).await;
    let s = sessions(&proxy).await;
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(
        s[0]["session"], s[1]["session"],
        "one session, fingerprinted by its first messages"
    );
    assert_eq!(
        (s[0]["messages"].as_u64(), s[1]["messages"].as_u64()),
        (Some(4), Some(4))
    );
    // The upstream got the edited transcript whole, the original one unchanged.
    let seen = upstream.seen();
    let last: Value = serde_json::from_slice(&seen[2].body).unwrap();
    assert_eq!(last["messages"], msgs(&b));
    // The first line goes on where it was.
    let mut more = a.to_vec();
    more.extend([("assistant", "done"), ("user", "thanks")]);
    post(&proxy, &json!({"model": "m", "messages": msgs(&more)})).await;
    let s = sessions(&proxy).await;
    assert_eq!(
        (s[0]["messages"].as_u64(), s[1]["messages"].as_u64()),
        (Some(6), Some(4))
    );
    // Another task is another session; a named session is its own.
    post(
        &proxy,
        &json!({"model": "m", "messages": msgs(&[("system", "sys"), ("user", "another task")])}),
    )
    .await;
    assert_eq!(sessions(&proxy).await.len(), 3);
}

/// The proxy's binary, started on a free port; returns it and its URL. Its log (at
/// `debug`) is appended to `log` when given, else it logs warnings to stderr.
fn spawn_logged(
    upstream: &str,
    store: &str,
    policy: &std::path::Path,
    log: Option<&std::path::Path>,
) -> (Child, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_favur-context-proxy"));
    if let Some(log) = log {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        command.env("RUST_LOG", "debug").stderr(file);
    } else {
        command.env("RUST_LOG", "warn");
    }
    let mut child = command
        .args([
            "--listen",
            "127.0.0.1:0",
            "--openai-upstream",
            upstream,
            "--anthropic-upstream",
            upstream,
        ])
        .args(["--store", store, "--policy"])
        .arg(policy)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let url = common::listening_url(&mut child);
    (child, url)
}

async fn resumes_after_sigkill(store: impl Fn(&std::path::Path) -> String) {
    resumes_after_sigkill_logged(store, None).await;
}

/// A whole trace through the binary, killed (SIGKILL) and restarted on the same store
/// every 15 requests: every request upstream is the one an uninterrupted run sends.
async fn resumes_after_sigkill_logged(
    store: impl Fn(&std::path::Path) -> String,
    log: Option<&std::path::Path>,
) {
    let Some(trace) = trace("django__django-14725") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, test_policy().to_toml_string()).unwrap();
    let store = store(dir.path());
    let upstream = Upstream::start().await;
    let chat = to_chat(&trace);
    let points = request_points(&chat, |m| m["role"] == "assistant");
    let (mut child, mut proxy) = spawn_logged(&upstream.url, &store, &policy, log);
    let (mut direct, mut expected, mut kills) = (Direct::new(), Vec::new(), 0);
    for (n, &i) in points.iter().enumerate() {
        if n > 0 && n % 15 == 0 {
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
            kills += 1;
            (child, proxy) = spawn_logged(&upstream.url, &store, &policy, log);
        }
        let body = json!({"model": "m", "messages": &chat[..i]});
        direct.step(Wire::Chat.format(&body), &body, 0);
        expected.push(render_openai(&direct.history));
        post(&proxy, &body).await;
    }
    let s = sessions(&proxy).await;
    child.kill().unwrap();
    child.wait().unwrap();
    eprintln!(
        "{}: {} requests, {kills} kills, {} compactions",
        store.split(':').next().unwrap_or_default(),
        points.len(),
        direct.compactions
    );
    assert!(
        kills >= 3 && direct.compactions >= 3,
        "kills {kills}, compactions {}",
        direct.compactions
    );
    assert_eq!(s.len(), 1, "one session across every restart: {s:?}");
    assert_same_requests(&upstream, &expected, "an uninterrupted run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_session_resumes_after_sigkill() {
    resumes_after_sigkill(|d| format!("journal:{}", d.join("sessions").display())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_session_resumes_after_sigkill() {
    resumes_after_sigkill(|d| format!("sqlite:{}", d.join("sessions.db").display())).await;
}

/// The password of the PostgreSQL connection strings below (the test server trusts
/// every local connection, so any password is accepted and none is checked).
const PG_PASSWORD: &str = "pw-never-logged-7f3a";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_session_resumes_after_sigkill_and_its_password_is_never_logged() {
    let name = "a_postgres_session_resumes_after_sigkill";
    let Some(server) = tokio::task::block_in_place(|| server_or_skip(name)) else {
        return;
    };
    let url = format!("{} password={PG_PASSWORD}", server.config());
    let log = tempfile::NamedTempFile::new().unwrap();
    resumes_after_sigkill_logged(|_| format!("postgres:{url}"), Some(log.path())).await;
    let log = std::fs::read_to_string(log.path()).unwrap();
    assert!(
        log.contains("password=<hidden>") && log.contains("request compacted"),
        "the debug log names the store, redacted, and every request: {log}"
    );
    assert!(!log.contains(PG_PASSWORD), "the password is in the log");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_stored_session_is_let_go_and_read_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let_go_and_read_back(StoreSpec::Journal(dir.path().to_owned())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_postgres_session_is_let_go_and_read_back_the_same() {
    let name = "an_idle_postgres_session_is_let_go_and_read_back_the_same";
    let Some(server) = tokio::task::block_in_place(|| server_or_skip(name)) else {
        return;
    };
    // The URL form: the server's socket directory as a percent-encoded host.
    let config = server.config();
    let host = config
        .split(' ')
        .find_map(|kv| kv.strip_prefix("host="))
        .unwrap();
    let url = format!(
        "postgresql://postgres:{PG_PASSWORD}@{}:5432/postgres",
        host.replace('/', "%2F")
    );
    let spec: StoreSpec = url.parse().unwrap();
    assert!(!format!("{spec} {spec:?}").contains(PG_PASSWORD));
    let_go_and_read_back(spec).await;
}

/// A whole trace through an in-process proxy on `store` whose sessions are let go after
/// 1 s idle, paused every 15 requests: every request is the one a run kept in memory sends.
async fn let_go_and_read_back(store: StoreSpec) {
    let Some(trace) = trace("django__django-14725") else {
        return;
    };
    let upstream = Upstream::start().await;
    let mut config = common::test_config(&upstream, store);
    config.idle_unload = Some(std::time::Duration::from_millis(1000));
    let proxy = common::start_with(config).await;
    let chat = to_chat(&trace);
    let points = request_points(&chat, |m| m["role"] == "assistant");
    let (mut direct, mut expected, mut unloaded) = (Direct::new(), Vec::new(), 0);
    for (n, &i) in points.iter().enumerate() {
        let body = json!({"model": "m", "messages": &chat[..i]});
        direct.step(Wire::Chat.format(&body), &body, 0);
        expected.push(render_openai(&direct.history));
        post(&proxy, &body).await;
        if n % 15 == 14 {
            assert_eq!(
                sessions(&proxy).await.len(),
                1,
                "in memory right after a request"
            );
            tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
            assert_eq!(sessions(&proxy).await.len(), 0, "let go after 1 s idle");
            unloaded += 1;
        }
    }
    assert!(
        unloaded >= 3 && direct.compactions >= 3,
        "{unloaded} {}",
        direct.compactions
    );
    assert_same_requests(&upstream, &expected, "a run kept in memory");
}

/// Two proxies on one database, a client switching between them every 5 requests: each
/// switch finds the session taken over (fenced by the other's claim, nothing written),
/// reads it back and serves the request; every request is the one a single proxy sends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_proxies_on_one_postgres_database_take_a_session_over_in_turn() {
    let name = "two_proxies_on_one_postgres_database_take_a_session_over_in_turn";
    let Some(server) = tokio::task::block_in_place(|| server_or_skip(name)) else {
        return;
    };
    let Some(trace) = trace("django__django-14725") else {
        return;
    };
    let upstream = Upstream::start().await;
    let store = format!("postgres:{}", server.config()).parse().unwrap();
    let config = common::test_config(&upstream, store);
    let proxies = [
        common::start_with(config.clone()).await,
        common::start_with(config).await,
    ];
    let chat = to_chat(&trace);
    let points = request_points(&chat, |m| m["role"] == "assistant");
    let (mut direct, mut expected) = (Direct::new(), Vec::new());
    for (n, &i) in points.iter().enumerate() {
        let body = json!({"model": "m", "messages": &chat[..i]});
        direct.step(Wire::Chat.format(&body), &body, 0);
        expected.push(render_openai(&direct.history));
        post(&proxies[(n / 5) % 2], &body).await;
    }
    assert!(
        points.len() >= 20 && direct.compactions >= 3,
        "{} requests, {} compactions",
        points.len(),
        direct.compactions
    );
    assert_same_requests(&upstream, &expected, "a single proxy's");
}
