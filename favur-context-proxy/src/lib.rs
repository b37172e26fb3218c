//! `favur-context-proxy`: classified compaction for agents that cannot be recompiled.
//!
//! Put between an unmodified agent and its provider (the agent's base URL points here),
//! the proxy reads the whole transcript each request carries, records only what is new
//! in the session's store, classifies it with a rules file (`rules/coding-agent-shell.toml`
//! by default: tool results by tool and command), compacts it with the library's engine
//! as the policy says, and sends the compacted request, in the client's own format and
//! with the client's other fields, to the provider. The provider's answer comes back
//! byte for byte, streamed as it arrives.
//!
//! - Formats: OpenAI Chat Completions (`/v1/chat/completions`), Anthropic Messages
//!   (`/v1/messages`), OpenAI Responses (`/v1/responses`, client-held state) and Gemini
//!   (`/v1beta/models/MODEL:generateContent` and `:streamGenerateContent`, `/v1/` too).
//!   Every other path, and a body that holds no transcript, is passed through untouched;
//!   Google's other paths, and any request with a Gemini key, to the Gemini upstream.
//! - Sessions: the `x-favur-session` header names one; without it, the fingerprint of the
//!   transcript's first messages does. A transcript that diverges from what was recorded
//!   starts a new branch; the recorded one is never changed. Sessions live in memory, in
//!   a journal directory, a SQLite file or a PostgreSQL database, and a restarted proxy
//!   reads them back.
//! - Refusals are typed ([`ProxyError`]) and answered with a 4xx or 5xx whose JSON body
//!   says why; nothing is sent upstream then.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! use favur_context_proxy::config::Config;
//! let config = Config::new("https://api.openai.com", "https://api.anthropic.com")
//!     .map_err(std::io::Error::other)?;
//! let listener = tokio::net::TcpListener::bind(config.listen).await?;
//! favur_context_proxy::serve(config, listener).await
//! # }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod branch;
pub mod config;
pub mod digest;
mod error;
mod forward;
pub mod gemini;
mod routes;
mod sessions;
pub mod wire;

pub use error::ProxyError;
pub use routes::router;
pub use sessions::BranchInfo;

/// Serves the proxy for `config` on `listener` until the process ends, letting go of
/// idle stored sessions as [`config::Config::idle_unload`] says.
///
/// # Errors
///
/// The listener's I/O error.
pub async fn serve(
    config: config::Config,
    listener: tokio::net::TcpListener,
) -> std::io::Result<()> {
    let (router, shared) = routes::build(config);
    let sweeper = tokio::spawn(routes::sweep_idle(shared));
    let served = axum::serve(listener, router).await;
    sweeper.abort();
    served
}
