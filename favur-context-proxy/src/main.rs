//! `favur-context-proxy`: see the crate docs and `docs/proxy.md`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use favur_context::Policy;
use favur_context::import::rules::Rules;
use favur_context_proxy::config::{Config, DEFAULT_IDLE_UNLOAD, DEFAULT_MAX_BODY_BYTES, StoreSpec};

/// Classified compaction between an unmodified agent and its provider.
#[derive(Debug, Parser)]
#[command(name = "favur-context-proxy", version)]
struct Args {
    /// Where to listen. Loopback by default: the proxy sees every credential it forwards.
    #[arg(long, default_value = "127.0.0.1:8788")]
    listen: SocketAddr,
    /// The OpenAI-compatible upstream (Chat Completions, Responses), without `/v1`.
    #[arg(long, default_value = "https://api.openai.com")]
    openai_upstream: String,
    /// The Anthropic upstream, without `/v1`.
    #[arg(long, default_value = "https://api.anthropic.com")]
    anthropic_upstream: String,
    /// The Gemini upstream, without a version (`generateContent`, `/v1beta/...`, requests
    /// with a Gemini key).
    #[arg(long, default_value = favur_context_proxy::config::DEFAULT_GEMINI_UPSTREAM)]
    gemini_upstream: String,
    /// A rules file (TOML); the shipped `rules/coding-agent-shell.toml` by default.
    #[arg(long)]
    rules: Option<PathBuf>,
    /// A policy file (TOML or JSON), or `default`.
    #[arg(long, default_value = "default")]
    policy: String,
    /// Where sessions are kept: `memory`, `journal:DIR`, `sqlite:FILE` or `postgres:URL`
    /// (a libpq connection string or a `postgres://` URL; its password is never logged).
    /// By default a journal directory in the user's data directory.
    #[arg(long)]
    store: Option<StoreSpec>,
    /// Request bodies larger than this many bytes are refused with 413.
    #[arg(long, default_value_t = DEFAULT_MAX_BODY_BYTES)]
    max_body_bytes: usize,
    /// A stored session with no request for this many seconds is let go from memory
    /// (read back on its next request); 0: never.
    #[arg(long, default_value_t = DEFAULT_IDLE_UNLOAD.as_secs())]
    idle_unload_secs: u64,
}

/// `$XDG_DATA_HOME/favur-context-proxy`, else `~/.local/share/favur-context-proxy`, else
/// `./favur-context-proxy-data`.
fn default_store() -> StoreSpec {
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")));
    let dir = match base {
        Some(b) => b.join("favur-context-proxy"),
        None => PathBuf::from("favur-context-proxy-data"),
    };
    StoreSpec::Journal(dir)
}

fn config(args: Args) -> Result<Config, String> {
    let mut c = Config::new(args.openai_upstream, args.anthropic_upstream)
        .map_err(|e| format!("the shipped rules: {e}"))?;
    c.listen = args.listen;
    c.gemini_upstream = args.gemini_upstream;
    if let Some(path) = &args.rules {
        c.rules = Rules::load(path).map_err(|e| format!("--rules {}: {e}", path.display()))?;
    }
    if args.policy != "default" {
        c.policy =
            Policy::load(&args.policy).map_err(|e| format!("--policy {}: {e}", args.policy))?;
    }
    c.store = args.store.unwrap_or_else(default_store);
    if let StoreSpec::Journal(dir) = &c.store {
        std::fs::create_dir_all(dir).map_err(|e| format!("--store {}: {e}", dir.display()))?;
    }
    if let StoreSpec::Postgres(url) = &c.store {
        // Read now, so that a mistyped connection string stops the start (its error
        // names no value; the store is shown redacted).
        url.parse::<tokio_postgres::Config>()
            .map_err(|e| format!("--store {}: {e}", c.store))?;
    }
    c.max_body_bytes = args.max_body_bytes;
    c.idle_unload =
        (args.idle_unload_secs > 0).then(|| std::time::Duration::from_secs(args.idle_unload_secs));
    Ok(c)
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let config = match config(Args::parse()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("favur-context-proxy: {e}");
            return ExitCode::from(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(config.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "favur-context-proxy: cannot listen on {}: {e}",
                config.listen
            );
            return ExitCode::from(2);
        }
    };
    let addr = listener.local_addr().map_or(config.listen, |a| a);
    tracing::info!(%addr, store = %config.store, "listening");
    // The line a supervisor (or a test) waits for, on stdout.
    println!("listening on http://{addr}");
    match favur_context_proxy::serve(config, listener).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("favur-context-proxy: {e}");
            ExitCode::FAILURE
        }
    }
}
