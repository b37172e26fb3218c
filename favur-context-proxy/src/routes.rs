//! The HTTP face of the proxy: `/favur/sessions` on the loopback listener, the compacted
//! routes of every [`Wire`] format, and everything else passed through untouched.

use std::sync::{Arc, PoisonError};

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, Response};
use axum::response::IntoResponse;
use axum::routing::get;
use bytes::Bytes;
use favur_context::import::{ParseOptions, parse_with};
use serde_json::Value;

use crate::config::{Config, SESSION_HEADER};
use crate::digest::{message_digest, session_key};
use crate::error::ProxyError;
use crate::forward::forward;
use crate::sessions::Sessions;
use crate::wire::Wire;

/// What every request shares.
pub(crate) struct Shared {
    config: Config,
    sessions: Sessions,
    client: reqwest::Client,
}

/// The proxy's routes for `config` (serve them with `axum::serve`, or call [`crate::serve`]).
pub fn router(config: Config) -> Router {
    let shared = Arc::new(Shared {
        config,
        sessions: Sessions::default(),
        client: reqwest::Client::new(),
    });
    Router::new()
        .route("/favur/sessions", get(sessions))
        .fallback(any)
        .with_state(shared)
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
    let wire = Wire::from_path(&path).filter(|_| parts.method == Method::POST);
    let anthropic = wire == Some(Wire::Anthropic)
        || path.starts_with("/v1/messages")
        || parts.headers.contains_key("anthropic-version");
    let base = if anthropic {
        &shared.config.anthropic_upstream
    } else {
        &shared.config.openai_upstream
    };
    let query = parts
        .uri
        .query()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    let url = format!("{}{path}{query}", base.trim_end_matches('/'));
    let body = match wire {
        Some(wire) => compacted(&shared, wire, &parts.headers, body).await?,
        None => body,
    };
    forward(&shared.client, parts.method, &url, &parts.headers, body).await
}

/// The body to send for a request in `wire` format: compacted when it holds a transcript
/// the proxy can compact, the client's own bytes otherwise.
async fn compacted(
    shared: &Arc<Shared>,
    wire: Wire,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Bytes, ProxyError> {
    let value: Value =
        serde_json::from_slice(&body).map_err(|e| ProxyError::NotJson(e.to_string()))?;
    if !wire.compactable(&value) {
        return Ok(body);
    }
    let header = headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let shared = Arc::clone(shared);
    let work = move || step(&shared, wire, header.as_deref(), &body, &value);
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ProxyError::Store(format!("the compaction task failed: {e}")))?
}

/// Imports, records, compacts and renders one request (blocking: the stores write
/// files).
fn step(
    shared: &Shared,
    wire: Wire,
    header: Option<&str>,
    text: &[u8],
    value: &Value,
) -> Result<Bytes, ProxyError> {
    let format = wire.format(value);
    let text = std::str::from_utf8(text).map_err(|e| ProxyError::NotJson(e.to_string()))?;
    let options = ParseOptions {
        keep_invalid_arguments: true,
    };
    let imported = parse_with(format, text, options)?.classify(&shared.config.rules)?;
    let digests: Vec<u64> = imported
        .iter()
        .map(|m| message_digest(m.classified.message()))
        .collect();
    let key = session_key(header, wire.format_family(), &digests);
    let (spec, policy) = (&shared.config.store, &shared.config.policy);
    let family = shared.sessions.family(&key, spec, policy)?;
    let mut family = family.lock().unwrap_or_else(PoisonError::into_inner);
    let i = family.choose(&digests, spec, policy)?;
    let branch = &mut family.branches[i];
    let done = branch.step(wire, value, imported, &digests)?;
    tracing::info!(
        session = %key,
        branch = %branch.name,
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
