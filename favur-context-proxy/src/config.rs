//! What the proxy is started with: where it listens, where each format goes upstream,
//! the rules and policy the engine applies, and where sessions are kept.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use favur_context::Policy;
use favur_context::rules::{Rules, RulesError};

/// The largest request body accepted by default (32 MiB): a 200k-token transcript is
/// about 1 MB of JSON; images inline make it larger.
pub const DEFAULT_MAX_BODY_BYTES: usize = 32 << 20;

/// The header a client may send to name its session (`x-favur-session: build-42`).
/// Without it, a session is found by the fingerprint of the transcript's first messages.
pub const SESSION_HEADER: &str = "x-favur-session";

/// The Gemini API's base URL, the default `gemini_upstream` of a [`Config`].
pub const DEFAULT_GEMINI_UPSTREAM: &str = "https://generativelanguage.googleapis.com";

/// Where the proxy keeps sessions.
///
/// ```
/// use favur_context_proxy::config::StoreSpec;
/// assert_eq!("memory".parse::<StoreSpec>().unwrap(), StoreSpec::Memory);
/// assert_eq!("journal:/tmp/s".parse::<StoreSpec>().unwrap(), StoreSpec::Journal("/tmp/s".into()));
/// assert_eq!("sqlite:s.db".parse::<StoreSpec>().unwrap(), StoreSpec::Sqlite("s.db".into()));
/// let err = "redis://x".parse::<StoreSpec>().unwrap_err();
/// assert_eq!(err.to_string(), "unknown store `redis://x`: expected memory, journal:DIR or sqlite:FILE");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// In memory: sessions end with the process.
    Memory,
    /// One journal file per session branch in a directory (created if missing).
    Journal(PathBuf),
    /// Every session in one SQLite file.
    Sqlite(PathBuf),
}

/// A `--store` value that names no store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown store `{0}`: expected memory, journal:DIR or sqlite:FILE")]
pub struct UnknownStore(pub String);

impl FromStr for StoreSpec {
    type Err = UnknownStore;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let nonempty = |p: &str| (!p.is_empty()).then(|| PathBuf::from(p));
        if s == "memory" {
            return Ok(StoreSpec::Memory);
        }
        if let Some(dir) = s.strip_prefix("journal:").and_then(nonempty) {
            return Ok(StoreSpec::Journal(dir));
        }
        if let Some(file) = s.strip_prefix("sqlite:").and_then(nonempty) {
            return Ok(StoreSpec::Sqlite(file));
        }
        Err(UnknownStore(s.to_owned()))
    }
}

/// Everything the proxy runs with.
///
/// ```
/// use favur_context_proxy::config::{Config, StoreSpec};
/// let c = Config::new("http://127.0.0.1:9", "http://127.0.0.1:9")?;
/// assert_eq!(c.store, StoreSpec::Memory);
/// assert!(c.listen.ip().is_loopback());
/// assert_eq!(c.policy.window_tokens(), favur_context::DEFAULT_WINDOW_TOKENS);
/// # Ok::<(), favur_context::rules::RulesError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen (loopback by default: the proxy sees every credential).
    pub listen: SocketAddr,
    /// The base URL of the OpenAI-compatible upstream (Chat Completions, Responses),
    /// without `/v1`: `https://api.openai.com`.
    pub openai_upstream: String,
    /// The base URL of the Anthropic upstream, without `/v1`: `https://api.anthropic.com`.
    pub anthropic_upstream: String,
    /// The base URL of the Gemini upstream, without a version:
    /// [`DEFAULT_GEMINI_UPSTREAM`] unless set. Gemini's model calls, its other paths
    /// (`/v1beta/...`, `/upload/...`) and every request with a Gemini key go there.
    pub gemini_upstream: String,
    /// How messages are classified (`rules/coding-agent-shell.toml` by default).
    pub rules: Rules,
    /// The compaction policy.
    pub policy: Policy,
    /// Where sessions are kept.
    pub store: StoreSpec,
    /// Request bodies larger than this are refused with 413.
    pub max_body_bytes: usize,
    /// A session of a journal or SQLite store with no request for this long is let go
    /// from memory (read back from the store on its next request); `None`: never. Sessions
    /// in memory are never let go.
    pub idle_unload: Option<Duration>,
}

/// How long a stored session stays in memory without a request by default.
pub const DEFAULT_IDLE_UNLOAD: Duration = Duration::from_secs(300);

/// The rules shipped in `rules/coding-agent-shell.toml`, built in.
pub const SHIPPED_RULES: &str = include_str!("../../rules/coding-agent-shell.toml");

impl Config {
    /// A configuration with the shipped rules, the default policy, sessions in memory,
    /// the given upstreams and Google's for Gemini ([`DEFAULT_GEMINI_UPSTREAM`]), listening
    /// on `127.0.0.1:8788`.
    ///
    /// # Errors
    ///
    /// Only if the shipped rules did not parse, which the crate's tests rule out.
    ///
    /// See [`Config`] for an example.
    pub fn new(
        openai_upstream: impl Into<String>,
        anthropic_upstream: impl Into<String>,
    ) -> Result<Self, RulesError> {
        Ok(Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8788)),
            openai_upstream: openai_upstream.into(),
            anthropic_upstream: anthropic_upstream.into(),
            gemini_upstream: DEFAULT_GEMINI_UPSTREAM.to_owned(),
            rules: Rules::from_toml(SHIPPED_RULES)?,
            policy: Policy::default(),
            store: StoreSpec::Memory,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            idle_unload: Some(DEFAULT_IDLE_UNLOAD),
        })
    }
}
