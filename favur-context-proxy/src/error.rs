//! Why the proxy refused a request, as a typed error and as the HTTP answer the client
//! reads: a status and a JSON body both OpenAI's and Anthropic's clients parse
//! (`{"type": "error", "error": {"type", "code", "message"}}`).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use favur_context::import::ImportError;
use favur_context::render::validate::ValidationError;
use serde_json::json;

/// A request the proxy did not forward, or could not.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// The body is larger than the configured limit.
    #[error("the request body is over the proxy's limit of {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The body is not JSON.
    #[error("the request body is not JSON: {0}")]
    NotJson(String),
    /// The transcript cannot be read or classified (nothing was recorded).
    #[error("the transcript cannot be imported: {0}")]
    Import(#[from] ImportError),
    /// Even compacted, the request would carry the policy's limit or more.
    #[error("the request is over the compaction limit even after compaction: {0}")]
    OverLimit(String),
    /// The compacted request breaks a rule of its format (an engine bug: nothing sent).
    #[error("the compacted request would be invalid, not sent: {0}")]
    Invalid(ValidationError),
    /// The session store failed.
    #[error("the session store failed: {0}")]
    Store(String),
    /// Another proxy on the same database took the session over (its claim fenced this
    /// one's: nothing was written). The proxy reads the session back and tries once more;
    /// a client sees this only if that fails too.
    #[error("the session was taken over by another proxy: {0}")]
    TakenOver(String),
    /// The upstream could not be reached.
    #[error("the upstream could not be reached: {0}")]
    Upstream(String),
}

impl ProxyError {
    /// The HTTP status the client gets.
    ///
    /// ```
    /// use favur_context_proxy::ProxyError;
    /// assert_eq!(ProxyError::TooLarge { limit: 1 }.status().as_u16(), 413);
    /// assert_eq!(ProxyError::Upstream("refused".into()).status().as_u16(), 502);
    /// ```
    pub fn status(&self) -> StatusCode {
        match self {
            ProxyError::TooLarge { .. } | ProxyError::OverLimit(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ProxyError::NotJson(_) => StatusCode::BAD_REQUEST,
            ProxyError::Import(_) | ProxyError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ProxyError::Store(_) | ProxyError::TakenOver(_) => StatusCode::SERVICE_UNAVAILABLE,
            ProxyError::Upstream(_) => StatusCode::BAD_GATEWAY,
        }
    }

    /// A short machine-readable name of the error.
    pub fn code(&self) -> &'static str {
        match self {
            ProxyError::TooLarge { .. } => "body_too_large",
            ProxyError::NotJson(_) => "not_json",
            ProxyError::Import(_) => "transcript_not_importable",
            ProxyError::OverLimit(_) => "context_over_limit",
            ProxyError::Invalid(_) => "compacted_request_invalid",
            ProxyError::Store(_) => "store_failed",
            ProxyError::TakenOver(_) => "session_taken_over",
            ProxyError::Upstream(_) => "upstream_unreachable",
        }
    }
}

impl IntoResponse for ProxyError {
    fn into_response(self) -> Response {
        let body = json!({
            "type": "error",
            "error": {
                "type": "favur_proxy_error",
                "code": self.code(),
                "message": self.to_string(),
            }
        });
        (self.status(), axum::Json(body)).into_response()
    }
}
