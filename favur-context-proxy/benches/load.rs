//! Load on the proxy: 100 and 1,000 sessions of real traces on loopback, each request
//! about 60 KB. Measures the latency the proxy adds (proxied minus direct to the same
//! scripted upstream, per quantile), one request at a time across all sessions and with
//! every session sending at once, and the memory an idle session holds against its text.
//!
//! `cargo bench -p favur-context-proxy --bench load` (release). Figures: docs/proxy.md.
//! With `FAVUR_BENCH_PG=1`, a PostgreSQL row too: 50 sessions on a throwaway server
//! (fsync on; its 200 connections hold two proxies' 50 sessions and their recall);
//! `FAVUR_BENCH_PG=only`, that row alone.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use favur_context_proxy::config::{Config, StoreSpec};
use serde_json::{Value, json};

/// Request size the figures are for.
const TARGET_BYTES: usize = 60_000;
/// Requests each session sends while measured (its transcript grows by one step each).
const STEPS: usize = 4;

fn traces() -> Vec<Vec<Value>> {
    let dir = std::env::var_os("FAVUR_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../shared/traces/mini-swe-agent-gemini3pro"
            ))
        });
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (set FAVUR_TRACES)", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
            v["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] != "exit")
                .map(|m| json!({"role": m["role"], "content": m["content"]}))
                .collect()
        })
        .collect()
}

/// The request prefixes of one session: the first about `TARGET_BYTES`, then `STEPS`
/// more, each one assistant turn and its observation longer. `None` if the trace is too
/// short.
fn session_bodies(trace: &[Value]) -> Option<Vec<String>> {
    let mut size = 0;
    let mut cut = None;
    for (i, m) in trace.iter().enumerate() {
        size += m.to_string().len();
        if size >= TARGET_BYTES && m["role"] == "user" {
            cut = Some(i + 1);
            break;
        }
    }
    let cut = cut?;
    let bodies: Vec<String> = (0..=STEPS)
        .map(|s| cut + 2 * s)
        .take_while(|&end| end <= trace.len())
        .map(|end| json!({"model": "m", "messages": &trace[..end]}).to_string())
        .collect();
    (bodies.len() == STEPS + 1).then_some(bodies)
}

async fn upstream() -> String {
    let reply = json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]})
    .to_string();
    let app = Router::new().fallback(move |body: axum::body::Bytes| {
        let reply = reply.clone();
        async move {
            assert!(!body.is_empty());
            ([("content-type", "application/json")], reply)
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

async fn proxy(upstream: &str, store: StoreSpec, idle: Option<Duration>) -> String {
    let mut config = Config::new(upstream, upstream).unwrap();
    config.store = store;
    if idle.is_some() {
        config.idle_unload = idle;
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    config.listen = listener.local_addr().unwrap();
    let url = format!("http://{}", config.listen);
    tokio::spawn(favur_context_proxy::serve(config, listener));
    url
}

async fn timed(client: &reqwest::Client, url: &str, session: usize, body: &str) -> Duration {
    let start = Instant::now();
    let r = client
        .post(url)
        .header("content-type", "application/json")
        .header("x-favur-session", format!("s{session}"))
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap_or_default());
    r.bytes().await.unwrap();
    start.elapsed()
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Every session's step `s` once, sessions one after another; then the same bodies
/// straight to the upstream. Returns (proxied, direct) latencies, sorted.
async fn one_at_a_time(
    client: &reqwest::Client,
    proxy: &str,
    upstream: &str,
    sessions: &[Vec<String>],
) -> (Vec<Duration>, Vec<Duration>) {
    let (mut via, mut direct) = (Vec::new(), Vec::new());
    for step in 1..=STEPS {
        for (n, bodies) in sessions.iter().enumerate() {
            via.push(
                timed(
                    client,
                    &format!("{proxy}/v1/chat/completions"),
                    n,
                    &bodies[step],
                )
                .await,
            );
            direct.push(
                timed(
                    client,
                    &format!("{upstream}/v1/chat/completions"),
                    n,
                    &bodies[step],
                )
                .await,
            );
        }
    }
    via.sort();
    direct.sort();
    (via, direct)
}

/// The most requests in flight at once (loopback sockets of the client, the proxy and
/// the upstream stay under the default limit of 1,024 open files).
const IN_FLIGHT: usize = 200;

/// Every session sends its steps at the same time (each session in order, at most
/// [`IN_FLIGHT`] requests in flight); latencies, sorted.
async fn all_at_once(
    client: &reqwest::Client,
    url: &str,
    sessions: &[Vec<String>],
) -> Vec<Duration> {
    let sessions: Vec<Vec<String>> = sessions.to_vec();
    let gate = Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT));
    let mut tasks = Vec::new();
    for (n, bodies) in sessions.into_iter().enumerate() {
        let (client, url, gate) = (
            client.clone(),
            format!("{url}/v1/chat/completions"),
            Arc::clone(&gate),
        );
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::new();
            for body in &bodies[1..] {
                let _slot = gate.acquire().await.unwrap();
                out.push(timed(&client, &url, n + 1_000_000, body).await);
            }
            out
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort();
    all
}

/// Counts the bytes allocated and not yet freed, process-wide.
struct Counting;

static LIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts sizes.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), std::sync::atomic::Ordering::Relaxed);
        // SAFETY: the caller's layout is passed on as it is.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        LIVE.fetch_sub(layout.size(), std::sync::atomic::Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `alloc` above with this layout.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new, std::sync::atomic::Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), std::sync::atomic::Ordering::Relaxed);
        // SAFETY: as for `dealloc` and `alloc`.
        unsafe { std::alloc::System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes live on the heap now.
fn live_bytes() -> u64 {
    LIVE.load(std::sync::atomic::Ordering::Relaxed) as u64
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn run(n: usize, store: StoreSpec, label: &str, traces: &[Vec<Value>]) {
    let upstream = upstream().await;
    let proxy = proxy(&upstream, store.clone(), None).await;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(IN_FLIGHT)
        .build()
        .unwrap();
    let usable: Vec<Vec<String>> = traces.iter().filter_map(|t| session_bodies(t)).collect();
    let sessions: Arc<Vec<Vec<String>>> =
        Arc::new((0..n).map(|i| usable[i % usable.len()].clone()).collect());
    let mean_bytes = sessions.iter().map(|b| b[STEPS].len()).sum::<usize>() / n;

    // Warm: every session exists with its first body (its text is what it holds).
    let before = live_bytes();
    for (i, bodies) in sessions.iter().enumerate() {
        timed(
            &client,
            &format!("{proxy}/v1/chat/completions"),
            i,
            &bodies[0],
        )
        .await;
    }
    let text: usize = sessions.iter().map(|b| b[0].len()).sum();
    // The bodies are the bench's own; what the proxy holds is the rest.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let per_session = (live_bytes().saturating_sub(before)) as f64 / n as f64;

    let (via, direct) = one_at_a_time(&client, &proxy, &upstream, &sessions).await;
    let added = |q| ms(quantile(&via, q)) - ms(quantile(&direct, q));
    let concurrent = all_at_once(&client, &proxy, &sessions).await;
    let unloaded = match store {
        StoreSpec::Memory => "never let go".to_owned(),
        store => {
            let bytes = after_idle(&client, &upstream, store, &sessions).await;
            format!("{:.1} KB", bytes / 1000.0)
        }
    };
    println!(
        "| {label} | {n} | {:.1} KB | {:.2} / {:.2} ms | {:.2} / {:.2} ms | {:.1} / {:.1} ms | {:.0} KB ({:.2}x its text) | {unloaded} |",
        mean_bytes as f64 / 1000.0,
        added(0.5),
        added(0.99),
        ms(quantile(&direct, 0.5)),
        ms(quantile(&direct, 0.99)),
        ms(quantile(&concurrent, 0.5)),
        ms(quantile(&concurrent, 0.99)),
        per_session / 1000.0,
        per_session / (text as f64 / n as f64),
    );
}

/// Memory per session a fresh proxy on `store` holds once its sessions have been idle past
/// a 500 ms `idle_unload` (let go, kept in the store).
async fn after_idle(
    client: &reqwest::Client,
    upstream: &str,
    store: StoreSpec,
    sessions: &[Vec<String>],
) -> f64 {
    let before = live_bytes();
    let proxy = proxy(upstream, store, Some(Duration::from_millis(500))).await;
    let url = format!("{proxy}/v1/chat/completions");
    for (i, bodies) in sessions.iter().enumerate() {
        timed(client, &url, i + sessions.len(), &bodies[0]).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    live_bytes().saturating_sub(before) as f64 / sessions.len() as f64
}

fn main() {
    let traces = traces();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    println!(
        "| store | sessions | request | added p50 / p99 | direct p50 / p99 | all at once p50 / p99 | memory per idle session | after idle unload |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let pg = std::env::var("FAVUR_BENCH_PG").ok();
    rt.block_on(async {
        for n in [100, 1000]
            .into_iter()
            .filter(|_| pg.as_deref() != Some("only"))
        {
            run(n, StoreSpec::Memory, "memory", &traces).await;
            let journal = dir.path().join(format!("j{n}"));
            std::fs::create_dir_all(&journal).unwrap();
            run(n, StoreSpec::Journal(journal), "journal", &traces).await;
        }
        if pg.is_some() {
            let server = favur_context_tests::pg::Server::start(true).unwrap();
            run(
                50,
                StoreSpec::Postgres(server.config()),
                "postgres",
                &traces,
            )
            .await;
        }
    });
}
