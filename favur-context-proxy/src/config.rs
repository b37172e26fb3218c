//! What the proxy is started with: where it listens, where each format goes upstream,
//! the rules and policy the engine applies, and where sessions are kept.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use favur_context::Policy;
use favur_context::import::rules::{Rules, RulesError};

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
/// // A libpq connection string after `postgres:`, or a `postgres://` URL as it is.
/// assert_eq!(
///     "postgres:host=db user=proxy".parse::<StoreSpec>().unwrap(),
///     StoreSpec::Postgres("host=db user=proxy".into()),
/// );
/// assert_eq!(
///     "postgres://proxy@db/agents".parse::<StoreSpec>().unwrap(),
///     StoreSpec::Postgres("postgres://proxy@db/agents".into()),
/// );
/// let err = "redis://x".parse::<StoreSpec>().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "unknown store `redis://x`: expected memory, journal:DIR, sqlite:FILE or postgres:URL",
/// );
/// ```
///
/// Its `Debug` and [`Display`](std::fmt::Display) never show a PostgreSQL password:
///
/// ```
/// use favur_context_proxy::config::StoreSpec;
/// let s: StoreSpec = "postgres://proxy:hunter2@db:5433/agents".parse().unwrap();
/// assert_eq!(s.to_string(), "postgres:host=db port=5433 user=proxy dbname=agents password=<hidden>");
/// assert!(!format!("{s:?}").contains("hunter2"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// In memory: sessions end with the process.
    Memory,
    /// One journal file per session branch in a directory (created if missing).
    Journal(PathBuf),
    /// Every session in one SQLite file.
    Sqlite(PathBuf),
    /// Every session in one PostgreSQL database: a libpq connection string
    /// (`host=... user=... dbname=...`) or a `postgres://` URL. It may hold a password:
    /// shown, it is always redacted ([`StoreSpec::redacted`]).
    Postgres(String),
}

impl StoreSpec {
    /// The store as it may be logged: a PostgreSQL connection as its host, port, user and
    /// database only (`password=<hidden>` when it has one; `<unreadable connection string>`
    /// when it does not parse), the others as given.
    ///
    /// See [`StoreSpec`] for an example.
    pub fn redacted(&self) -> String {
        match self {
            StoreSpec::Memory => "memory".to_owned(),
            StoreSpec::Journal(dir) => format!("journal:{}", dir.display()),
            StoreSpec::Sqlite(file) => format!("sqlite:{}", file.display()),
            StoreSpec::Postgres(url) => format!("postgres:{}", redact_pg(url)),
        }
    }
}

/// The parts of a PostgreSQL connection string that are safe to log.
fn redact_pg(url: &str) -> String {
    let Ok(c) = url.parse::<tokio_postgres::Config>() else {
        return "<unreadable connection string>".to_owned();
    };
    let mut parts = Vec::new();
    let hosts: Vec<String> = c
        .get_hosts()
        .iter()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(name) => name.clone(),
            tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    if !hosts.is_empty() {
        parts.push(format!("host={}", hosts.join(",")));
    }
    let ports: Vec<String> = c.get_ports().iter().map(u16::to_string).collect();
    if !ports.is_empty() {
        parts.push(format!("port={}", ports.join(",")));
    }
    if let Some(user) = c.get_user() {
        parts.push(format!("user={user}"));
    }
    if let Some(db) = c.get_dbname() {
        parts.push(format!("dbname={db}"));
    }
    if c.get_password().is_some() {
        parts.push("password=<hidden>".to_owned());
    }
    parts.join(" ")
}

impl std::fmt::Display for StoreSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl std::fmt::Debug for StoreSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreSpec::Memory => f.write_str("Memory"),
            StoreSpec::Journal(dir) => f.debug_tuple("Journal").field(dir).finish(),
            StoreSpec::Sqlite(file) => f.debug_tuple("Sqlite").field(file).finish(),
            StoreSpec::Postgres(url) => f.debug_tuple("Postgres").field(&redact_pg(url)).finish(),
        }
    }
}

/// A `--store` value that names no store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown store `{0}`: expected memory, journal:DIR, sqlite:FILE or postgres:URL")]
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
        // `postgres://...` and `postgresql://...` are URLs as they are; after `postgres:`
        // anything else is a connection string (or a URL: `postgres:postgresql://...`).
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            return Ok(StoreSpec::Postgres(s.to_owned()));
        }
        if let Some(url) = s.strip_prefix("postgres:").filter(|u| !u.is_empty()) {
            return Ok(StoreSpec::Postgres(url.to_owned()));
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
/// assert_eq!(c.policy.window_tokens(), favur_context::compact::DEFAULT_WINDOW_TOKENS);
/// # Ok::<(), favur_context::import::rules::RulesError>(())
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
    /// A session of a journal, SQLite or PostgreSQL store with no request for this long
    /// is let go from memory (read back from the store on its next request); `None`:
    /// never. Sessions in memory are never let go.
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
