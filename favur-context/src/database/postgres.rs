//! The PostgreSQL store ([`PgStore`]): many sessions, many machines, one server; each
//! session's records as append-only rows, replayed on open with the journal's checks.

use std::sync::Arc;

use tokio_postgres::Client;

use crate::database::StoreError;
use crate::database::claim::{self, Holder};
use crate::database::pg_connect::{connect, db_error};
use crate::database::pg_originals::PgOriginals;
use crate::database::rows::{self, Row, RowIn};
use crate::database::sealing::RowSeal;
use crate::database::session::{Claim, Core, Failure, Pending, SessionOptions};
use crate::history::NewEntry;
use crate::history::view::Compaction;
use crate::history::{CheckedCompaction, History};
use crate::model::entry::EntryId;
use crate::store_trait::{AsyncStore, SCHEMA_VERSION};

/// The schema, one script per version: `MIGRATIONS[v]` takes version `v` to `v + 1`.
const MIGRATIONS: &[&str] = &[
    "
CREATE TABLE favur_sessions (
    session        TEXT PRIMARY KEY,
    framing_tokens INTEGER NOT NULL,
    counter        TEXT NOT NULL,
    epoch          BIGINT NOT NULL,
    owner          TEXT,
    lease_until    TIMESTAMPTZ NOT NULL
);
CREATE TABLE favur_records (
    session  TEXT NOT NULL REFERENCES favur_sessions (session),
    seq      BIGINT NOT NULL,
    first_id BIGINT NOT NULL,
    ids      BIGINT NOT NULL,
    epoch    BIGINT NOT NULL,
    body     TEXT NOT NULL,
    PRIMARY KEY (session, seq)
);
CREATE INDEX favur_records_by_id ON favur_records (session, first_id);
",
    "
ALTER TABLE favur_records ADD COLUMN mac TEXT;
",
];

/// Rows read per query when replaying a session (memory stays bounded while opening).
const PAGE: i64 = 2_000;

/// A session of a PostgreSQL database: an [`AsyncStore`] whose every append and
/// compaction is one row (the journal's record encoding), committed before it is
/// acknowledged; opening the session again, on any machine, gives back the same history
/// and view as the [`JournaledHistory`](crate::journal::JournaledHistory) would, ids included.
///
/// One writer per session across machines: opening claims the session (refused with
/// [`StoreError::Claimed`] while another writer's lease runs, by the server's clock);
/// every write locks the session's row (`SELECT ... FOR UPDATE`) in its own transaction,
/// checks that the fencing epoch is still this writer's and renews the lease; a writer
/// whose claim was taken over gets [`StoreError::Fenced`] and never writes again.
/// [`close`](PgStore::close) releases the claim; a store dropped without it (a killed
/// process) holds it until the lease runs out.
///
/// Faults: a write that fails before `COMMIT` (a statement timeout, a dropped
/// connection, a server restart) is [`StoreError::Database`] and wrote nothing; a
/// failure during `COMMIT` leaves the outcome unknown: that write is
/// [`StoreError::Uncertain`] ("may have landed: reopen and look") and the store
/// [`Poisoned`](StoreError::Poisoned) from then on. Either way, reopening the session (with the same
/// [`owner`](SessionOptions::owner) to take the claim back at once) gives back everything
/// acknowledged.
///
/// It must be opened and used inside a tokio runtime (its connection is a spawned task).
/// Recall of evicted originals ([`History::recall`]) is synchronous: it asks a thread of
/// the store's own, with its own connection and runtime, and blocks until that answers,
/// so it works from inside a runtime too (it blocks the calling thread meanwhile).
///
/// ```no_run
/// use favur_context::store::PgStore;
/// use favur_context::{fuzzy, strict, AsyncStore};
/// # async fn run() -> Result<(), favur_context::store::StoreError> {
/// let mut store = PgStore::open("host=/tmp port=5432 user=postgres dbname=agents", "job-1").await?;
/// store.pin(strict!(system: "You are a coding agent.")).await?;
/// let id = store.append(fuzzy!(user: "Fix the parser.")).await?;
/// assert_eq!(store.history().recall(id).unwrap().message().text(), "Fix the parser.");
/// store.close().await?;
/// # Ok(()) }
/// ```
pub struct PgStore {
    pub(super) core: Core,
    client: Client,
    lease_secs: f64,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("core", &self.core)
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Opens (or creates) `session` on the server `config` names (a libpq-style
    /// connection string: `host=... port=... user=... dbname=...`) with the default
    /// [`SessionOptions`].
    ///
    /// # Errors
    ///
    /// As for [`open_with`](PgStore::open_with).
    pub async fn open(config: &str, session: &str) -> Result<PgStore, StoreError> {
        PgStore::open_with(config, session, &SessionOptions::new()).await
    }

    /// Opens (or creates) `session` on the server `config` names: creates or migrates the
    /// schema, claims the session, and replays its rows into the history.
    ///
    /// # Errors
    ///
    /// [`StoreError::Claimed`] while another writer's lease runs,
    /// [`StoreError::Schema`] for a database of a newer schema, [`StoreError::Counter`]
    /// for a session counted with another counter, [`StoreError::Corrupt`] or
    /// [`StoreError::Sequence`] for a damaged row (nothing is loaded),
    /// [`StoreError::Database`] if the server cannot be reached or fails.
    pub async fn open_with(
        config: &str,
        session: &str,
        options: &SessionOptions,
    ) -> Result<PgStore, StoreError> {
        let mut client = connect(config, session, Some(options)).await?;
        migrate(&mut client, session).await?;
        let owner = options.owner_token();
        let (epoch, framing) = claim_session(&mut client, session, options, &owner).await?;
        let mut history = options.new_history(framing);
        let mut seal = options.row_seal(session, framing);
        if !options.history.keep_originals {
            let counter = Arc::clone(&options.history.counter);
            let reader = PgOriginals::start(config, session, counter, seal.reader())?;
            history = history.with_originals(Arc::new(reader));
        }
        let next_seq = match replay_rows(&client, session, &mut history, &mut seal).await {
            Ok(next) => next,
            Err(e) => {
                // Nothing was loaded: the claim is given back.
                let _ = release(&client, session, epoch).await;
                return Err(e);
            }
        };
        Ok(PgStore {
            core: Core::new(session, history, seal, next_seq, epoch, owner),
            client,
            lease_secs: options.lease_duration().as_secs_f64(),
        })
    }

    /// The history as recorded (as [`AsyncStore::history`], without the trait in scope).
    pub fn history(&self) -> &History {
        &self.core.history
    }

    /// This writer's claim on the session: the session, owner token, fencing epoch, and
    /// whether it was fenced.
    pub fn claim(&self) -> Claim<'_> {
        Claim(&self.core)
    }

    /// Renews the lease without writing (during a long pause between writes).
    ///
    /// # Errors
    ///
    /// [`StoreError::Fenced`] if the claim was taken over, [`StoreError::Database`].
    pub async fn renew(&mut self) -> Result<(), StoreError> {
        self.core.usable()?;
        let result = transact(&mut self.client, &self.core, self.lease_secs, &[]).await;
        result.map_err(|f| self.core.failed(f))
    }

    /// Releases the claim (if it is still this writer's), so another writer may open the
    /// session at once, and closes the connection.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] if the server could not be told (then the claim runs out
    /// with its lease).
    pub async fn close(self) -> Result<(), StoreError> {
        release(&self.client, &self.core.session, self.core.epoch).await
    }

    /// Writes the session to `out` as a journal, row by row (each row is one journal
    /// record): what `favur-context replay` and `audit` read.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] if the rows cannot be read or `out` not written.
    pub async fn export_journal(&self, out: impl std::io::Write) -> Result<(), StoreError> {
        let session = &self.core.session;
        let db = |e| db_error(session, "export", e);
        let rows = self
            .client
            .query(
                "SELECT body, mac FROM favur_records WHERE session = $1 ORDER BY seq",
                &[session],
            )
            .await
            .map_err(db)?;
        let mut seal = self.core.seal.fresh();
        let mut bodies: Vec<String> = Vec::with_capacity(rows.len());
        for (i, r) in rows.iter().enumerate() {
            let body: String = r.try_get(0).map_err(db)?;
            let mac: Option<&str> = r.try_get(1).map_err(db)?;
            seal.check(session, i as i64, mac.map(str::as_bytes), body.as_bytes())?;
            bodies.push(body);
        }
        let h = &self.core.history;
        crate::journal::write_journal(
            h.framing_tokens(),
            h.counter().id(),
            bodies.iter().map(String::as_str),
            self.core.seal.key(),
            out,
        )
        .map_err(|e| StoreError::database(session, "export", e))
    }

    /// Opens `session` (which must be new or empty) on the server `config` names and
    /// imports the journal `reader` holds into it, every record checked by the journal's
    /// replay, in one transaction.
    ///
    /// # Errors
    ///
    /// [`StoreError::Journal`] for a journal that does not replay (nothing imported),
    /// [`StoreError::NotEmpty`] for a session holding records, and the errors of
    /// [`open_with`](PgStore::open_with).
    pub async fn import_journal(
        config: &str,
        session: &str,
        reader: impl std::io::Read,
        options: &SessionOptions,
    ) -> Result<PgStore, StoreError> {
        let (mut rows, options) = crate::database::interchange::read_journal(reader, options)?;
        let mut store = PgStore::open_with(config, session, &options).await?;
        store.core.importable()?;
        store.core.seal_rows(&mut rows);
        let result = transact(&mut store.client, &store.core, store.lease_secs, &rows).await;
        result.map_err(|f| store.core.failed(f))?;
        store.core.settle_rows(&rows)?;
        Ok(store)
    }

    /// Writes `pending`'s row (with the fencing check and lease renewal), then records it
    /// in memory.
    async fn persist(&mut self, pending: Pending) -> Result<EntryId, StoreError> {
        let rows = std::slice::from_ref(&pending.row);
        if let Err(f) = transact(&mut self.client, &self.core, self.lease_secs, rows).await {
            return Err(self.core.failed(f));
        }
        self.core.settle(pending)
    }
}

impl AsyncStore for PgStore {
    type Error = StoreError;

    fn history(&self) -> &History {
        &self.core.history
    }

    /// Inserts the entries as one row in one transaction (checking the claim), then
    /// records them in memory. On any error nothing was recorded.
    async fn record(&mut self, entries: Vec<NewEntry>) -> Result<EntryId, StoreError> {
        match self.core.entries(entries)? {
            None => Ok(self.core.history.next_id()),
            Some(pending) => self.persist(pending).await,
        }
    }

    /// Checks the compaction against the view, inserts it as one row, then commits it in
    /// memory. On any error nothing changed.
    async fn apply(&mut self, compaction: Compaction) -> Result<(), StoreError> {
        let pending = self.core.compaction(compaction)?;
        self.persist(pending).await.map(|_| ())
    }

    /// Inserts a compaction checked against this history as one row, then commits it in
    /// memory, without checking it again. On any error nothing changed.
    async fn apply_checked(&mut self, checked: CheckedCompaction) -> Result<(), StoreError> {
        let pending = self.core.checked(checked)?;
        self.persist(pending).await.map(|_| ())
    }

    /// Inserts a `request_overhead` row (none if the overhead is already `tokens`), then
    /// sets it in memory. On any error it is unchanged.
    async fn set_request_overhead_tokens(&mut self, tokens: u64) -> Result<(), StoreError> {
        match self.core.overhead(tokens)? {
            None => Ok(()),
            Some(pending) => self.persist(pending).await.map(|_| ()),
        }
    }
}

/// Releases the claim of `session` if its epoch is still `epoch`.
async fn release(client: &Client, session: &str, epoch: i64) -> Result<(), StoreError> {
    client
        .execute(
            "UPDATE favur_sessions SET owner = NULL, lease_until = 'epoch' WHERE session = $1 AND epoch = $2",
            &[&session, &epoch],
        )
        .await
        .map_err(|e| db_error(session, "release the claim of", e))?;
    Ok(())
}

/// One write transaction: the session's row locked, the claim checked and renewed, `rows`
/// inserted.
async fn transact(
    client: &mut Client,
    core: &Core,
    lease_secs: f64,
    rows: &[Row],
) -> Result<(), Failure> {
    let session = core.session.as_str();
    let db = |action| move |e| Failure::Before(db_error(session, action, e));
    let tx = client.transaction().await.map_err(db("begin a write to"))?;
    let found = tx
        .query_opt(
            "SELECT epoch FROM favur_sessions WHERE session = $1 FOR UPDATE",
            &[&session],
        )
        .await
        .map_err(db("lock the claim of"))?;
    let epoch: Option<i64> = match found {
        Some(r) => Some(r.try_get(0).map_err(db("read the claim of"))?),
        None => None,
    };
    claim::still_mine(session, epoch, core.epoch).map_err(Failure::Fenced)?;
    for row in rows {
        tx.execute(
            "INSERT INTO favur_records (session, seq, first_id, ids, epoch, body, mac) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[&session, &row.seq, &row.first_id, &row.ids, &core.epoch, &row.body, &row.mac],
        )
        .await
        .map_err(db("insert a row into"))?;
    }
    tx.execute(
        "UPDATE favur_sessions SET lease_until = clock_timestamp() + make_interval(secs => $2) WHERE session = $1",
        &[&session, &lease_secs],
    )
    .await
    .map_err(db("renew the lease of"))?;
    tx.commit()
        .await
        .map_err(|e| Failure::Commit(db_error(session, "commit a write to", e)))
}

/// Creates the schema, or migrates it to [`SCHEMA_VERSION`], under an advisory lock (many
/// processes may open at once); a newer one is [`StoreError::Schema`].
async fn migrate(client: &mut Client, session: &str) -> Result<(), StoreError> {
    let db = |e| db_error(session, "create the schema for", e);
    let tx = client.transaction().await.map_err(db)?;
    tx.batch_execute(
        "SELECT pg_advisory_xact_lock(7261830515); CREATE TABLE IF NOT EXISTS favur_schema_version (version INTEGER NOT NULL)",
    )
    .await
    .map_err(db)?;
    let found: i32 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM favur_schema_version",
            &[],
        )
        .await
        .and_then(|r| r.try_get(0))
        .map_err(db)?;
    let found = i64::from(found);
    if found > SCHEMA_VERSION {
        return Err(StoreError::Schema {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for script in MIGRATIONS.iter().skip(found.max(0) as usize) {
        tx.batch_execute(script).await.map_err(db)?;
    }
    if found < SCHEMA_VERSION {
        let version = SCHEMA_VERSION as i32;
        tx.execute("DELETE FROM favur_schema_version", &[])
            .await
            .map_err(db)?;
        tx.execute(
            "INSERT INTO favur_schema_version (version) VALUES ($1)",
            &[&version],
        )
        .await
        .map_err(db)?;
    }
    tx.commit().await.map_err(db)
}

/// Claims `session` for `owner` (creating it if new), by the server's clock; its epoch
/// and framing tokens.
async fn claim_session(
    client: &mut Client,
    session: &str,
    options: &SessionOptions,
    owner: &str,
) -> Result<(i64, u32), StoreError> {
    let db = |e| db_error(session, "claim", e);
    let tx = client.transaction().await.map_err(db)?;
    let framing = i32::try_from(options.history.framing_tokens).unwrap_or(i32::MAX);
    tx.execute(
        "INSERT INTO favur_sessions (session, framing_tokens, counter, epoch, owner, lease_until) VALUES ($1, $2, $3, 0, NULL, 'epoch') ON CONFLICT (session) DO NOTHING",
        &[&session, &framing, &options.counter_id()],
    )
    .await
    .map_err(db)?;
    let row = tx
        .query_one(
            "SELECT epoch, owner, (extract(epoch FROM lease_until - clock_timestamp()) * 1000)::bigint, framing_tokens, counter FROM favur_sessions WHERE session = $1 FOR UPDATE",
            &[&session],
        )
        .await
        .map_err(db)?;
    let holder = Holder {
        epoch: row.try_get(0).map_err(db)?,
        owner: row.try_get(1).map_err(db)?,
        remaining_ms: row.try_get(2).map_err(db)?,
    };
    let framing: i32 = row.try_get(3).map_err(db)?;
    let counter: String = row.try_get(4).map_err(db)?;
    options.check_counter(session, &counter)?;
    let epoch = claim::claim(session, &holder, owner)?;
    tx.execute(
        "UPDATE favur_sessions SET epoch = $2, owner = $3, lease_until = clock_timestamp() + make_interval(secs => $4) WHERE session = $1",
        &[&session, &epoch, &owner, &options.lease_duration().as_secs_f64()],
    )
    .await
    .map_err(db)?;
    tx.commit().await.map_err(db)?;
    let framing =
        crate::history::usage::checked_framing(i64::from(framing)).map_err(|message| {
            StoreError::Corrupt {
                session: session.to_owned(),
                seq: 0,
                problem: crate::journal::Corruption::InvalidHeader { message },
            }
        })?;
    Ok((epoch, framing))
}

/// Replays the session's rows into `history`, a page at a time; the next sequence number.
async fn replay_rows(
    client: &Client,
    session: &str,
    history: &mut History,
    seal: &mut RowSeal,
) -> Result<i64, StoreError> {
    let db = |e| db_error(session, "read the rows of", e);
    let mut next = 0i64;
    loop {
        let page = client
            .query(
                "SELECT seq, first_id, ids, body, mac FROM favur_records WHERE session = $1 AND seq >= $2 ORDER BY seq LIMIT $3",
                &[&session, &next, &PAGE],
            )
            .await
            .map_err(db)?;
        for r in &page {
            let body: &str = r.try_get(3).map_err(db)?;
            let mac: Option<&str> = r.try_get(4).map_err(db)?;
            let row = RowIn {
                seq: r.try_get(0).map_err(db)?,
                first_id: r.try_get(1).map_err(db)?,
                ids: r.try_get(2).map_err(db)?,
                body: body.as_bytes(),
                mac: mac.map(str::as_bytes),
            };
            rows::replay(history, session, next, row, seal)?;
            next += 1;
        }
        if (page.len() as i64) < PAGE {
            return Ok(next);
        }
    }
}
