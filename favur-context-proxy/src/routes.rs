//! The HTTP face of the proxy: `/favur/sessions` on the loopback listener, the compacted
//! routes of every [`Wire`] format, and everything else passed through untouched.

use std::sync::{Arc, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, Response};
use axum::response::IntoResponse;
use axum::routing::get;
use bytes::Bytes;
use favur_context::import::{ImportError, ParseOptions, parse_value, read_json};
use favur_context::render::GeminiOptions;
use serde_json::Value;

use crate::config::{Config, SESSION_HEADER, StoreSpec};
use crate::digest::{message_digest, session_key};
use crate::error::ProxyError;
use crate::forward::forward;
use crate::gemini;
use crate::sessions::Sessions;
use crate::wire::Wire;

/// What every request shares.
pub(crate) struct Shared {
    config: Config,
    sessions: Sessions,
    client: reqwest::Client,
}

/// The proxy's routes for `config` (serve them with `axum::serve`, or call [`crate::serve`]).
///
/// A router alone never lets go of idle sessions; [`crate::serve`] does.
pub fn router(config: Config) -> Router {
    build(config).0
}

/// The routes and the state they share.
pub(crate) fn build(config: Config) -> (Router, Arc<Shared>) {
    let shared = Arc::new(Shared {
        config,
        sessions: Sessions::default(),
        client: reqwest::Client::new(),
    });
    let router = Router::new()
        .route("/favur/sessions", get(sessions))
        .fallback(any)
        .with_state(Arc::clone(&shared));
    (router, shared)
}

/// Lets go of stored sessions idle for the configured time, checking four times per
/// idle period (at most once a minute). Sessions in memory only are never let go.
pub(crate) async fn sweep_idle(shared: Arc<Shared>) {
    let Some(idle) = shared.config.idle_unload else {
        return;
    };
    if matches!(shared.config.store, StoreSpec::Memory) {
        return;
    }
    let every = (idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(60));
    loop {
        tokio::time::sleep(every).await;
        let n = shared.sessions.unload_idle(idle);
        if n > 0 {
            tracing::debug!(sessions = n, "idle sessions let go (kept in the store)");
        }
    }
}

async fn sessions(State(shared): State<Arc<Shared>>) -> impl IntoResponse {
    axum::Json(shared.sessions.list())
}

async fn any(State(shared): State<Arc<Shared>>, request: Request) -> Response<Body> {
    match handle(shared, request).await {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(code = e.code(), error = %e, "request refused");
            e.into_response()
        }
    }
}

async fn handle(shared: Arc<Shared>, request: Request) -> Result<Response<Body>, ProxyError> {
    let (parts, body) = request.into_parts();
    let limit = shared.config.max_body_bytes;
    let body = to_bytes(body, limit)
        .await
        .map_err(|_| ProxyError::TooLarge { limit })?;
    let path = parts.uri.path().to_owned();
    let query = parts.uri.query();
    let gemini_key = gemini::carries_gemini_key(&parts.headers, query);
    let wire = Wire::from_path(&path)
        .filter(|_| parts.method == Method::POST)
        // A Gemini key on another format's path: Google's, passed through untouched.
        .filter(|w| !gemini_key || *w == Wire::Gemini);
    let base = upstream(&shared.config, wire, &path, &parts.headers, gemini_key);
    let query = query.map(|q| format!("?{q}")).unwrap_or_default();
    let url = format!("{}{path}{query}", base.trim_end_matches('/'));
    let body = match wire {
        Some(wire) => {
            let model = gemini::generate_model(&path).unwrap_or_default();
            let options = GeminiOptions::for_model(model);
            compacted(&shared, (wire, options), &parts.headers, body).await?
        }
        None => body,
    };
    forward(&shared.client, parts.method, &url, &parts.headers, body).await
}

/// The upstream a request goes to: Gemini's for its paths and any request with a Gemini
/// key, Anthropic's for `/v1/messages...` and any request with an `anthropic-version`
/// header, OpenAI's for everything else.
fn upstream<'c>(
    config: &'c Config,
    wire: Option<Wire>,
    path: &str,
    headers: &HeaderMap,
    gemini_key: bool,
) -> &'c str {
    if wire == Some(Wire::Gemini) || gemini_key || gemini::is_gemini_path(path) {
        &config.gemini_upstream
    } else if wire == Some(Wire::Anthropic)
        || path.starts_with("/v1/messages")
        || headers.contains_key("anthropic-version")
    {
        &config.anthropic_upstream
    } else {
        &config.openai_upstream
    }
}

/// The body to send for a request in `wire` format: compacted when it holds a transcript
/// the proxy can compact, the client's own bytes otherwise.
async fn compacted(
    shared: &Arc<Shared>,
    (wire, gemini): (Wire, GeminiOptions),
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Bytes, ProxyError> {
    let text = std::str::from_utf8(&body).map_err(|e| ProxyError::NotJson(e.to_string()))?;
    let mut value = match read_json(text) {
        Ok(v) => v,
        Err(ImportError::Json(e)) => return Err(ProxyError::NotJson(e)),
        Err(e) => return Err(ProxyError::Import(e)),
    };
    if wire == Wire::Gemini {
        gemini::normalize(&mut value);
    }
    if !wire.compactable(&value) {
        return Ok(body);
    }
    let header = headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let shared = Arc::clone(shared);
    let work = move || step(&shared, (wire, &gemini), header.as_deref(), &value);
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ProxyError::Store(format!("the compaction task failed: {e}")))?
}

/// Imports, records, compacts and renders one request (blocking: the stores write
/// files).
fn step(
    shared: &Shared,
    (wire, gemini): (Wire, &GeminiOptions),
    header: Option<&str>,
    value: &Value,
) -> Result<Bytes, ProxyError> {
    let format = wire.format(value);
    let options = ParseOptions {
        keep_invalid_arguments: true,
    };
    let import = || parse_value(format, value, options)?.classify(&shared.config.rules);
    let mut imported = import()?;
    let digests: Vec<u64> = imported
        .iter()
        .map(|m| message_digest(m.classified.message()))
        .collect();
    let key = session_key(header, wire.format_family(), &digests);
    let (spec, policy) = (&shared.config.store, &shared.config.policy);
    let mut retried = false;
    let (branch, done) = loop {
        let family = shared.sessions.family(&key, spec, policy)?;
        let mut family = family.lock().unwrap_or_else(PoisonError::into_inner);
        let i = family.choose(&digests, spec, policy)?;
        let branch = &mut family.branches[i];
        let done = branch.step((wire, gemini), value, imported, &digests);
        shared.sessions.touch(&key); // idle time counts from the end of a request
        match done {
            // Another proxy on the database opened the session since this one read it
            // (nothing was written): read it back, claiming it again, and serve the
            // request once more.
            Err(ProxyError::TakenOver(why)) if !retried => {
                tracing::warn!(session = %key, %why, "session taken over: read back");
                drop(family);
                shared.sessions.forget(&key);
                (imported, retried) = (import()?, true);
            }
            done => break (branch.name.clone(), done?),
        }
    };
    tracing::info!(
        session = %key,
        branch = %branch,
        format = wire.name(),
        imported = done.imported,
        usage_tokens = done.usage_tokens,
        compaction = done.report.as_ref().map(|r| r.to_string()),
        "request compacted"
    );
    serde_json::to_vec(&done.body)
        .map(Bytes::from)
        .map_err(|e| ProxyError::Store(e.to_string()))
}
