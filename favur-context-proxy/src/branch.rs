//! One line of a session: its store, its compactor, and the digest of every message it
//! recorded, in order. A request that extends the line imports only its new suffix.

use std::path::Path;
use std::sync::OnceLock;

use favur_context::compact::{BuiltinSummarizer, CompactionReport, PrepareError, Ready};
use favur_context::import::ImportedMessage;
use favur_context::journal::JournaledHistory;
use favur_context::message::EntryKind;
use favur_context::render::GeminiOptions;
use favur_context::store::{NewEntry, PgStore, SessionOptions, SqliteStore, StoreError};
use favur_context::{AsyncStore, Compactor, EntryId, History, Policy, Store};
use serde_json::Value;

use crate::config::StoreSpec;
use crate::digest::message_digest;
use crate::error::ProxyError;
use crate::wire::Wire;

/// The owner the proxy claims SQLite and PostgreSQL sessions as: the same after a
/// restart, so a proxy killed mid-request reopens its sessions without waiting out its
/// own lease. (Two proxies on one database so take a session from each other at once;
/// the one taken from is fenced: see `docs/proxy.md`.)
const OWNER: &str = "favur-context-proxy";

/// Where a branch is kept.
enum Backing {
    Memory(History),
    Journal(JournaledHistory),
    Sqlite(SqliteStore),
    Postgres(PgStore),
}

/// The built-in summarizer, usable by both the synchronous `prepare` (journal, SQLite,
/// memory) and `prepare_async` (PostgreSQL): one compactor type for every backing.
type Builtin = Ready<BuiltinSummarizer>;

/// Runs a PostgreSQL store call to its end from a blocking thread (`spawn_blocking`:
/// every branch call is made there), on a runtime of its own: the stores' connection
/// tasks are spawned there too, so they never wait for a worker of the server's runtime
/// (one of which may be blocked on the sessions' lock meanwhile, a deadlock otherwise).
fn block_on<F: std::future::Future>(f: F) -> Result<F::Output, String> {
    static PG: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    let runtime = PG.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("favur-proxy-pg")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    });
    match runtime {
        Ok(runtime) => Ok(runtime.block_on(f)),
        Err(e) => Err(format!("no runtime for the PostgreSQL store: {e}")),
    }
}

/// What one request did to its branch.
#[derive(Debug)]
pub(crate) struct Step {
    /// The body to send upstream.
    pub body: Value,
    /// The compaction made before it, if any.
    pub report: Option<CompactionReport>,
    /// The request's usage in tokens, after compaction.
    pub usage_tokens: u64,
    /// How many messages were new.
    pub imported: usize,
}

/// A session branch (see the module docs).
pub(crate) struct Branch {
    pub name: String,
    backing: Backing,
    compactor: Compactor<Builtin>,
    digests: Vec<u64>,
    pub requests: u64,
    pub compactions: u64,
}

impl Branch {
    /// Opens (or creates) the branch `name` in `spec`, and reads back the digests of what
    /// it recorded.
    pub fn open(spec: &StoreSpec, name: &str, policy: &Policy) -> Result<Branch, ProxyError> {
        let store = |e: &dyn std::fmt::Display| ProxyError::Store(format!("session {name}: {e}"));
        let backing = match spec {
            StoreSpec::Memory => Backing::Memory(History::new()),
            StoreSpec::Journal(dir) => {
                let path = journal_path(dir, name);
                Backing::Journal(JournaledHistory::open(&path).map_err(|e| store(&e))?)
            }
            StoreSpec::Sqlite(file) => {
                let options = SessionOptions::new().owner(OWNER);
                Backing::Sqlite(
                    SqliteStore::open_with(file, name, &options).map_err(|e| store(&e))?,
                )
            }
            StoreSpec::Postgres(url) => {
                let options = SessionOptions::new().owner(OWNER);
                let opened =
                    block_on(PgStore::open_with(url, name, &options)).map_err(|e| store(&e))?;
                Backing::Postgres(opened.map_err(|e| store(&e))?)
            }
        };
        let mut branch = Branch {
            name: name.to_owned(),
            backing,
            compactor: Compactor::with_summarizer(
                policy.clone(),
                Ready(BuiltinSummarizer::default()),
            ),
            digests: Vec::new(),
            requests: 0,
            compactions: 0,
        };
        branch.digests = recorded_digests(branch.history()).map_err(|e| store(&e))?;
        Ok(branch)
    }

    /// The history of the branch.
    pub fn history(&self) -> &History {
        match &self.backing {
            Backing::Memory(h) => h,
            Backing::Journal(j) => j.history(),
            Backing::Sqlite(s) => s.history(),
            Backing::Postgres(p) => p.history(),
        }
    }

    /// How many messages it recorded.
    pub fn len(&self) -> usize {
        self.digests.len()
    }

    /// How many leading messages of a transcript with `digests` it recorded.
    pub fn common_prefix(&self, digests: &[u64]) -> usize {
        self.digests
            .iter()
            .zip(digests)
            .take_while(|(a, b)| a == b)
            .count()
    }

    /// Records the messages of `imported` it has not recorded yet, compacts as the
    /// policy says, and renders the client's `body` with the compacted view. The caller
    /// checked that the branch's messages are a prefix of `imported`. `gemini` is how a
    /// Gemini body is rendered (the options of its model).
    pub fn step(
        &mut self,
        (wire, gemini): (Wire, &GeminiOptions),
        body: &Value,
        imported: Vec<ImportedMessage>,
        digests: &[u64],
    ) -> Result<Step, ProxyError> {
        let have = self.digests.len();
        let new: Vec<NewEntry> = imported
            .into_iter()
            .skip(have)
            .map(NewEntry::from)
            .collect();
        let imported = new.len();
        if !new.is_empty() {
            self.record(new)?;
            self.digests
                .extend_from_slice(digests.get(have..).unwrap_or_default());
        }
        let overhead = wire.overhead_text(body);
        let overhead = if overhead.is_empty() {
            0
        } else {
            u64::from(self.history().counter().count_text(&overhead))
        };
        self.set_overhead(overhead)?;
        let (report, usage_tokens) = self.prepare()?;
        self.requests += 1;
        self.compactions += u64::from(report.is_some());
        let body = wire.splice(body, self.history(), gemini);
        wire.validate(&body).map_err(ProxyError::Invalid)?;
        Ok(Step {
            body,
            report,
            usage_tokens,
            imported,
        })
    }

    fn record(&mut self, entries: Vec<NewEntry>) -> Result<EntryId, ProxyError> {
        let name = &self.name;
        let store = |e: &dyn std::fmt::Display| ProxyError::Store(format!("session {name}: {e}"));
        match &mut self.backing {
            Backing::Memory(h) => Store::record(h, entries).map_err(|e| store(&e)),
            Backing::Journal(j) => Store::record(j, entries).map_err(|e| store(&e)),
            Backing::Sqlite(s) => Store::record(s, entries).map_err(|e| db_error(name, e)),
            Backing::Postgres(p) => block_on(AsyncStore::record(p, entries))
                .map_err(|e| store(&e))?
                .map_err(|e| db_error(name, e)),
        }
    }

    /// Sets the request overhead through the store: recorded by the journal, SQLite and
    /// PostgreSQL (only when it changes), so a resumed session budgets as before.
    fn set_overhead(&mut self, tokens: u64) -> Result<(), ProxyError> {
        let name = &self.name;
        let store = |e: &dyn std::fmt::Display| ProxyError::Store(format!("session {name}: {e}"));
        match &mut self.backing {
            Backing::Memory(h) => {
                Store::set_request_overhead_tokens(h, tokens).map_err(|e| store(&e))
            }
            Backing::Journal(j) => {
                Store::set_request_overhead_tokens(j, tokens).map_err(|e| store(&e))
            }
            Backing::Sqlite(s) => {
                Store::set_request_overhead_tokens(s, tokens).map_err(|e| db_error(name, e))
            }
            Backing::Postgres(p) => block_on(AsyncStore::set_request_overhead_tokens(p, tokens))
                .map_err(|e| store(&e))?
                .map_err(|e| db_error(name, e)),
        }
    }

    fn prepare(&mut self) -> Result<(Option<CompactionReport>, u64), ProxyError> {
        let c = &mut self.compactor;
        let done = match &mut self.backing {
            Backing::Memory(h) => {
                Compactor::prepare(c, h).map_err(|e| prepare_error(&self.name, e))
            }
            Backing::Journal(j) => {
                Compactor::prepare(c, j).map_err(|e| prepare_error(&self.name, e))
            }
            Backing::Sqlite(s) => {
                Compactor::prepare(c, s).map_err(|e| prepare_error(&self.name, e))
            }
            Backing::Postgres(p) => block_on(c.prepare_async(p))
                .map_err(|e| ProxyError::Store(format!("session {}: {e}", self.name)))?
                .map_err(|e| db_prepare_error(&self.name, e)),
        }?;
        Ok((done.report, done.usage_tokens))
    }
}

/// The journal file of branch `name` in `dir`.
pub(crate) fn journal_path(dir: &Path, name: &str) -> std::path::PathBuf {
    dir.join(format!("{name}.jsonl"))
}

fn prepare_error<E: std::fmt::Display>(name: &str, e: PrepareError<E>) -> ProxyError {
    match e {
        PrepareError::Limit(limit) => ProxyError::OverLimit(limit.to_string()),
        PrepareError::Store(e) => ProxyError::Store(format!("session {name}: {e}")),
        // A refusal a later version adds: reported as the session's failure, with its text.
        other => ProxyError::Store(format!("session {name}: {other}")),
    }
}

/// A database store's failure: [`ProxyError::TakenOver`] when another writer's claim
/// fenced this one (another proxy on the same database opened the session since).
fn db_error(name: &str, e: StoreError) -> ProxyError {
    match e {
        StoreError::Fenced { .. } => ProxyError::TakenOver(format!("session {name}: {e}")),
        e => ProxyError::Store(format!("session {name}: {e}")),
    }
}

/// [`prepare_error`] of a database store ([`db_error`] for its own failures).
fn db_prepare_error(name: &str, e: PrepareError<StoreError>) -> ProxyError {
    match e {
        PrepareError::Store(e) => db_error(name, e),
        other => prepare_error(name, other),
    }
}

/// The digests of the messages a history recorded (summaries are the engine's own, not
/// the client's), read back by id so evicted originals count too.
fn recorded_digests(history: &History) -> Result<Vec<u64>, favur_context::store::RecallError> {
    let mut out = Vec::new();
    for id in 0..history.next_id().0 {
        let entry = history.recall(EntryId(id))?;
        if !matches!(entry.kind(), EntryKind::Summary { .. }) {
            out.push(message_digest(entry.message()));
        }
    }
    Ok(out)
}
