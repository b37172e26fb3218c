//! The way to the provider and back: the client's headers (credentials included) go to
//! the configured upstream only, and the provider's answer comes back as it came:
//! status, headers and body, streamed chunk by chunk as they arrive.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderName, Method, Response};
use bytes::Bytes;

use crate::error::ProxyError;

/// Headers that describe one connection, not the message: never forwarded either way.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
];

/// Whether a request header goes upstream: not hop-by-hop, not the proxy's own session
/// header, and not `content-length` (the body may have been compacted).
pub(crate) fn forwarded_request_header(name: &HeaderName) -> bool {
    let n = name.as_str();
    !HOP_BY_HOP.contains(&n) && n != "content-length" && n != crate::config::SESSION_HEADER
}

/// Sends `body` to `url` with the client's `method` and headers, and returns the
/// upstream's answer as the client's response, its body streamed through.
pub(crate) async fn forward(
    client: &reqwest::Client,
    method: Method,
    url: &str,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Response<Body>, ProxyError> {
    let mut out = reqwest::header::HeaderMap::new();
    for (name, value) in headers {
        if forwarded_request_header(name) {
            out.append(name.clone(), value.clone());
        }
    }
    let upstream = client
        .request(method, url)
        .headers(out)
        .body(body)
        .send()
        .await
        .map_err(|e| ProxyError::Upstream(without_url(&e)))?;
    let mut response = Response::builder().status(upstream.status());
    for (name, value) in upstream.headers() {
        if !HOP_BY_HOP.contains(&name.as_str()) {
            response = response.header(name, value);
        }
    }
    response
        .body(Body::from_stream(upstream.bytes_stream()))
        .map_err(|e| ProxyError::Upstream(e.to_string()))
}

/// A reqwest error's text without the URL (a query string may hold a key).
fn without_url(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "connection failed"
    } else {
        "request failed"
    };
    let mut text = kind.to_owned();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
