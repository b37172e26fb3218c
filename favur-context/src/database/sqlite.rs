//! The SQLite store ([`SqliteStore`]): many sessions in one database file on one machine,
//! each session's records as append-only rows, replayed on open with the journal's
//! checks.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

use crate::database::StoreError;
use crate::database::claim::{self, Holder, now_ms};
use crate::database::rows::{self, Row, RowIn};
use crate::database::sealing::RowSeal;
use crate::database::session::{Claim, Core, Failure, Pending, SessionOptions};
use crate::database::sqlite_originals::SqliteOriginals;
use crate::history::NewEntry;
use crate::history::view::Compaction;
use crate::history::{CheckedCompaction, History};
use crate::model::entry::EntryId;
use crate::store_trait::{SCHEMA_VERSION, Store};

/// The schema, one script per version: `MIGRATIONS[v]` takes version `v` to `v + 1`.
const MIGRATIONS: &[&str] = &[
    "
CREATE TABLE favur_sessions (
    session        TEXT PRIMARY KEY,
    framing_tokens INTEGER NOT NULL,
    counter        TEXT NOT NULL,
    epoch          INTEGER NOT NULL,
    owner          TEXT,
    lease_until    INTEGER NOT NULL
);
CREATE TABLE favur_records (
    session  TEXT NOT NULL REFERENCES favur_sessions (session),
    seq      INTEGER NOT NULL,
    first_id INTEGER NOT NULL,
    ids      INTEGER NOT NULL,
    epoch    INTEGER NOT NULL,
    body     TEXT NOT NULL,
    PRIMARY KEY (session, seq)
);
CREATE INDEX favur_records_by_id ON favur_records (session, first_id);
",
    "
ALTER TABLE favur_records ADD COLUMN mac TEXT;
",
];

/// A session of a SQLite database: a [`Store`] whose every append and compaction is one
/// row (the journal's record encoding), committed before it is acknowledged; opening the
/// session again, from any process on the machine, gives back the same history and view
/// as the [`JournaledHistory`](crate::journal::JournaledHistory) would, ids included.
///
/// One file holds many sessions. One writer per session: opening claims the session
/// (refused with [`StoreError::Claimed`] while another writer's lease runs), every write
/// checks in its own transaction that the claim is still this one's and renews the lease,
/// and a writer whose claim was taken over gets [`StoreError::Fenced`] and never writes
/// again. Dropping the store releases the claim.
///
/// Durability: WAL with `synchronous=FULL`, so an acknowledged write survives a power
/// loss. Memory is bounded by the view: evicted originals are read back from the
/// database.
///
/// ```
/// use favur_context::compact::{Compaction, Edit};
/// use favur_context::store::{SqliteStore, StoreError};
/// use favur_context::{fuzzy, strict, Store};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("fleet.sqlite");
/// let mut store = SqliteStore::open(&path, "job-1")?;
/// store.pin(strict!(system: "You are a coding agent."))?;
/// let listing = store.append(fuzzy!(tool_result("c1"): "Cargo.toml\nsrc/"))?;
/// store.apply(Compaction { tier: std::num::NonZeroU8::MIN, edits: vec![Edit::Drop { id: listing }], usage_after: None })?;
/// assert_eq!(store.history().entries().len(), 1); // evicted from memory...
/// let back = store.history().recall(listing).unwrap(); // ...read back from the database
/// assert_eq!(back.message().tool_results().next().unwrap().content, "Cargo.toml\nsrc/");
///
/// // A second writer for the same session is refused; another session is not.
/// assert!(matches!(SqliteStore::open(&path, "job-1"), Err(StoreError::Claimed { .. })));
/// let other = SqliteStore::open(&path, "job-2")?;
/// assert!(other.history().is_empty());
/// drop(store);
/// let reopened = SqliteStore::open(&path, "job-1")?;
/// assert_eq!(reopened.history().len(), 2);
/// assert!(reopened.history().view().is_empty());
/// # Ok::<(), StoreError>(())
/// ```
#[derive(Debug)]
pub struct SqliteStore {
    pub(super) core: Core,
    conn: Connection,
    path: PathBuf,
    lease_ms: i64,
}

impl SqliteStore {
    /// Opens (or creates) `session` in the database at `path` (created with its schema if
    /// missing) with the default [`SessionOptions`].
    ///
    /// # Errors
    ///
    /// As for [`open_with`](SqliteStore::open_with).
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = favur_context::store::SqliteStore::open(dir.path().join("s.db"), "main")?;
    /// assert_eq!(store.claim().session(), "main");
    /// # Ok::<(), favur_context::store::StoreError>(())
    /// ```
    pub fn open(path: impl AsRef<Path>, session: &str) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_with(path, session, &SessionOptions::new())
    }

    /// Opens (or creates) `session` in the database at `path`: creates or migrates the
    /// schema, claims the session, and replays its rows into the history.
    ///
    /// # Errors
    ///
    /// [`StoreError::Claimed`] while another writer's lease runs,
    /// [`StoreError::Schema`] for a database of a newer schema, [`StoreError::Counter`]
    /// for a session counted with another counter, [`StoreError::Corrupt`] or
    /// [`StoreError::Sequence`] for a damaged row (nothing is loaded),
    /// [`StoreError::Database`] if SQLite fails.
    ///
    /// ```
    /// use std::time::Duration;
    /// use favur_context::store::{SessionOptions, SqliteStore};
    /// let dir = tempfile::tempdir().unwrap();
    /// let options = SessionOptions::new().lease(Duration::from_secs(5)).owner("worker-1");
    /// let store = SqliteStore::open_with(dir.path().join("s.db"), "job", &options)?;
    /// assert_eq!(store.claim().owner(), "worker-1");
    /// assert_eq!(store.claim().epoch(), 1);
    /// # Ok::<(), favur_context::store::StoreError>(())
    /// ```
    pub fn open_with(
        path: impl AsRef<Path>,
        session: &str,
        options: &SessionOptions,
    ) -> Result<SqliteStore, StoreError> {
        let path = path.as_ref();
        let mut conn = connect(path, session, OpenFlags::default())?;
        migrate(&mut conn, session)?;
        let owner = options.owner_token();
        let (epoch, framing) = claim_session(&mut conn, session, options, &owner)?;
        let mut history = options.new_history(framing);
        let mut seal = options.row_seal(session, framing);
        if !options.history.keep_originals {
            let reader = connect(path, session, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
            history = history.with_originals(Arc::new(SqliteOriginals {
                session: session.to_owned(),
                conn: Mutex::new(reader),
                counter: Arc::clone(&options.history.counter),
                sealed: seal.reader(),
            }));
        }
        let next_seq = match replay_rows(&conn, session, &mut history, &mut seal) {
            Ok(next) => next,
            Err(e) => {
                // Nothing was loaded: the claim is given back.
                release(&conn, session, epoch);
                return Err(e);
            }
        };
        Ok(SqliteStore {
            core: Core::new(session, history, seal, next_seq, epoch, owner),
            conn,
            path: path.to_path_buf(),
            lease_ms: options.lease_ms(),
        })
    }

    /// The history as recorded (as [`Store::history`], callable with both [`Store`] and
    /// [`AsyncStore`](crate::AsyncStore) in scope).
    pub fn history(&self) -> &History {
        &self.core.history
    }

    /// This writer's claim on the session: the session, owner token, fencing epoch, and
    /// whether it was fenced.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// drop(favur_context::store::SqliteStore::open(&path, "a")?);
    /// let store = favur_context::store::SqliteStore::open(&path, "a")?;
    /// let claim = store.claim();
    /// assert_eq!((claim.session(), claim.epoch()), ("a", 2));
    /// assert!(claim.owner().starts_with("pid") && !claim.is_fenced());
    /// # Ok::<(), favur_context::store::StoreError>(())
    /// ```
    pub fn claim(&self) -> Claim<'_> {
        Claim(&self.core)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renews the lease without writing (during a long pause between writes).
    ///
    /// # Errors
    ///
    /// [`StoreError::Fenced`] if the claim was taken over, [`StoreError::Database`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let mut store = favur_context::store::SqliteStore::open(dir.path().join("s.db"), "a")?;
    /// store.renew()?;
    /// # Ok::<(), favur_context::store::StoreError>(())
    /// ```
    pub fn renew(&mut self) -> Result<(), StoreError> {
        self.core.usable()?;
        self.transact(&[]).map_err(|f| self.core.failed(f))
    }

    /// Writes the session to `out` as a journal, row by row (each row is one journal
    /// record): what `favur-context replay` and `audit` read, and what
    /// [`import_journal`](SqliteStore::import_journal) or
    /// [`OpenOptions::open`](crate::journal::OpenOptions::open) take back.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] if the rows cannot be read or `out` not written.
    ///
    /// ```
    /// use favur_context::store::SqliteStore;
    /// use favur_context::{fuzzy, History, Store};
    /// # let dir = tempfile::tempdir().unwrap();
    /// let mut store = SqliteStore::open(dir.path().join("s.db"), "job")?;
    /// store.append(fuzzy!(user: "hi"))?;
    /// let mut journal = Vec::new();
    /// store.export_journal(&mut journal)?;
    /// let (history, _) = History::from_journal(&journal[..]).unwrap();
    /// assert_eq!(history.view(), store.history().view());
    /// # Ok::<(), favur_context::store::StoreError>(())
    /// ```
    pub fn export_journal(&self, out: impl std::io::Write) -> Result<(), StoreError> {
        let bodies = self.bodies()?;
        let h = &self.core.history;
        crate::journal::write_journal(
            h.framing_tokens(),
            h.counter().id(),
            bodies.iter().map(|(_, b)| b.as_str()),
            self.core.seal.key(),
            out,
        )
        .map_err(|e| StoreError::database(&self.core.session, "export", e))
    }

    /// Opens `session` (which must be new or empty) in the database at `path` and
    /// imports the journal `reader` holds into it, every record checked by the journal's
    /// replay, all in one transaction: the session then holds the journal's history and
    /// view, ids included.
    ///
    /// # Errors
    ///
    /// [`StoreError::Journal`] for a journal that does not replay (nothing imported),
    /// [`StoreError::NotEmpty`] for a session holding records, and the errors of
    /// [`open_with`](SqliteStore::open_with).
    ///
    /// ```
    /// use favur_context::store::{SessionOptions, SqliteStore};
    /// use favur_context::journal::JournaledHistory;
    /// use favur_context::{fuzzy, Store};
    /// # let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("agent.jsonl");
    /// let mut journal = JournaledHistory::open(&path)?;
    /// journal.append(fuzzy!(user: "hi"))?;
    /// let file = std::fs::File::open(&path).unwrap();
    /// let store = SqliteStore::import_journal(dir.path().join("s.db"), "job", file, &SessionOptions::new())?;
    /// assert_eq!(store.history().view(), journal.history().view());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn import_journal(
        path: impl AsRef<Path>,
        session: &str,
        reader: impl std::io::Read,
        options: &SessionOptions,
    ) -> Result<SqliteStore, StoreError> {
        let (mut rows, options) = crate::database::interchange::read_journal(reader, options)?;
        let mut store = SqliteStore::open_with(path, session, &options)?;
        store.core.importable()?;
        store.core.seal_rows(&mut rows);
        if let Err(f) = store.transact(&rows) {
            return Err(store.core.failed(f));
        }
        store.core.settle_rows(&rows)?;
        Ok(store)
    }

    /// The rows of the session in order, as `(sequence, body)`: each body one journal
    /// record, each verified in a sealed session.
    fn bodies(&self) -> Result<Vec<(i64, String)>, StoreError> {
        let session = self.core.session.as_str();
        let db = |e| StoreError::database(session, "read the rows of", e);
        let mut stmt = self
            .conn
            .prepare("SELECT seq, body, mac FROM favur_records WHERE session = ?1 ORDER BY seq")
            .map_err(db)?;
        let rows = stmt
            .query_map([session], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(db)?;
        let rows: Vec<(i64, String, Option<String>)> =
            rows.collect::<Result<_, _>>().map_err(db)?;
        let mut seal = self.core.seal.fresh();
        let mut bodies = Vec::with_capacity(rows.len());
        for (i, (seq, body, mac)) in rows.into_iter().enumerate() {
            let mac = mac.as_deref().map(str::as_bytes);
            seal.check(session, i as i64, mac, body.as_bytes())?;
            bodies.push((seq, body));
        }
        Ok(bodies)
    }

    /// Writes `pending`'s row (with the fencing check and lease renewal), then records it
    /// in memory.
    fn persist(&mut self, pending: Pending) -> Result<EntryId, StoreError> {
        if let Err(f) = self.transact(std::slice::from_ref(&pending.row)) {
            return Err(self.core.failed(f));
        }
        self.core.settle(pending)
    }

    /// One write transaction: the claim checked and renewed, `rows` inserted.
    fn transact(&mut self, rows: &[Row]) -> Result<(), Failure> {
        let session = self.core.session.as_str();
        let db = |action| move |e| Failure::Before(StoreError::database(session, action, e));
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(db("begin a write to"))?;
        fence(&tx, session, self.core.epoch)?;
        for row in rows {
            insert(&tx, session, self.core.epoch, row).map_err(db("insert a row into"))?;
        }
        tx.execute(
            "UPDATE favur_sessions SET lease_until = ?2 WHERE session = ?1",
            params![session, now_ms().saturating_add(self.lease_ms)],
        )
        .map_err(db("renew the lease of"))?;
        tx.commit()
            .map_err(|e| Failure::Commit(StoreError::database(session, "commit a write to", e)))
    }
}

impl Store for SqliteStore {
    type Error = StoreError;

    fn history(&self) -> &History {
        &self.core.history
    }

    /// Inserts the entries as one row in one transaction (checking the claim), then
    /// records them in memory. On any error nothing was recorded.
    fn record(&mut self, entries: Vec<NewEntry>) -> Result<EntryId, StoreError> {
        match self.core.entries(entries)? {
            None => Ok(self.core.history.next_id()),
            Some(pending) => self.persist(pending),
        }
    }

    /// Checks the compaction against the view, inserts it as one row, then commits it in
    /// memory. On any error nothing changed.
    fn apply(&mut self, compaction: Compaction) -> Result<(), StoreError> {
        let pending = self.core.compaction(compaction)?;
        self.persist(pending).map(|_| ())
    }

    /// Inserts a compaction checked against this history as one row, then commits it in
    /// memory, without checking it again. On any error nothing changed.
    fn apply_checked(&mut self, checked: CheckedCompaction) -> Result<(), StoreError> {
        let pending = self.core.checked(checked)?;
        self.persist(pending).map(|_| ())
    }

    /// Inserts a `request_overhead` row (none if the overhead is already `tokens`), then
    /// sets it in memory. On any error it is unchanged.
    fn set_request_overhead_tokens(&mut self, tokens: u64) -> Result<(), StoreError> {
        match self.core.overhead(tokens)? {
            None => Ok(()),
            Some(pending) => self.persist(pending).map(|_| ()),
        }
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        release(&self.conn, &self.core.session, self.core.epoch);
    }
}

/// Releases the claim of `session` if its epoch is still `epoch`. Best effort: a claim
/// not released runs out with its lease.
fn release(conn: &Connection, session: &str, epoch: i64) {
    let _ = conn.execute(
        "UPDATE favur_sessions SET owner = NULL, lease_until = 0 WHERE session = ?1 AND epoch = ?2",
        params![session, epoch],
    );
}

/// `Err(Fenced)` unless the session's epoch, read in this transaction, is `mine`.
fn fence(tx: &rusqlite::Transaction<'_>, session: &str, mine: i64) -> Result<(), Failure> {
    let found: Option<i64> = tx
        .query_row(
            "SELECT epoch FROM favur_sessions WHERE session = ?1",
            [session],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| Failure::Before(StoreError::database(session, "read the claim of", e)))?;
    claim::still_mine(session, found, mine).map_err(Failure::Fenced)
}

fn insert(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    epoch: i64,
    row: &Row,
) -> rusqlite::Result<usize> {
    tx.execute(
        "INSERT INTO favur_records (session, seq, first_id, ids, epoch, body, mac) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![session, row.seq, row.first_id, row.ids, epoch, row.body, row.mac],
    )
}

/// A connection to the database at `path`: WAL, `synchronous=FULL`, a busy timeout.
fn connect(path: &Path, session: &str, flags: OpenFlags) -> Result<Connection, StoreError> {
    let db = |e| StoreError::database(session, "open the database of", e);
    let conn = Connection::open_with_flags(path, flags).map_err(db)?;
    conn.busy_timeout(Duration::from_secs(10)).map_err(db)?;
    if !flags.contains(OpenFlags::SQLITE_OPEN_READ_ONLY) {
        let _mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .map_err(db)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(db)?;
    }
    Ok(conn)
}

/// Creates the schema, or migrates it to [`SCHEMA_VERSION`]; a newer one is
/// [`StoreError::Schema`].
fn migrate(conn: &mut Connection, session: &str) -> Result<(), StoreError> {
    let db = |e| StoreError::database(session, "create the schema for", e);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    tx.execute_batch("CREATE TABLE IF NOT EXISTS favur_schema_version (version INTEGER NOT NULL)")
        .map_err(db)?;
    let found: i64 = tx
        .query_row(
            "SELECT coalesce(max(version), 0) FROM favur_schema_version",
            [],
            |r| r.get(0),
        )
        .map_err(db)?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::Schema {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for script in MIGRATIONS.iter().skip(found.max(0) as usize) {
        tx.execute_batch(script).map_err(db)?;
    }
    if found < SCHEMA_VERSION {
        tx.execute("DELETE FROM favur_schema_version", [])
            .map_err(db)?;
        tx.execute(
            "INSERT INTO favur_schema_version (version) VALUES (?1)",
            [SCHEMA_VERSION],
        )
        .map_err(db)?;
    }
    tx.commit().map_err(db)
}

/// Claims `session` for `owner` (creating it if new); its epoch and framing tokens.
fn claim_session(
    conn: &mut Connection,
    session: &str,
    options: &SessionOptions,
    owner: &str,
) -> Result<(i64, u32), StoreError> {
    let db = |e| StoreError::database(session, "claim", e);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    tx.execute(
        "INSERT OR IGNORE INTO favur_sessions (session, framing_tokens, counter, epoch, owner, lease_until) VALUES (?1, ?2, ?3, 0, NULL, 0)",
        params![session, options.history.framing_tokens, options.counter_id()],
    )
    .map_err(db)?;
    let (epoch, holder, lease_until, framing, counter): (i64, Option<String>, i64, i64, String) = tx
        .query_row(
            "SELECT epoch, owner, lease_until, framing_tokens, counter FROM favur_sessions WHERE session = ?1",
            [session],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .map_err(db)?;
    options.check_counter(session, &counter)?;
    let now = now_ms();
    let holder = Holder {
        epoch,
        owner: holder,
        remaining_ms: lease_until.saturating_sub(now),
    };
    let epoch = claim::claim(session, &holder, owner)?;
    tx.execute(
        "UPDATE favur_sessions SET epoch = ?2, owner = ?3, lease_until = ?4 WHERE session = ?1",
        params![
            session,
            epoch,
            owner,
            now.saturating_add(options.lease_ms())
        ],
    )
    .map_err(db)?;
    tx.commit().map_err(db)?;
    let framing =
        crate::history::usage::checked_framing(framing).map_err(|message| StoreError::Corrupt {
            session: session.to_owned(),
            seq: 0,
            problem: crate::journal::Corruption::InvalidHeader { message },
        })?;
    Ok((epoch, framing))
}

/// Replays the session's rows into `history`; the next sequence number.
fn replay_rows(
    conn: &Connection,
    session: &str,
    history: &mut History,
    seal: &mut RowSeal,
) -> Result<i64, StoreError> {
    let db = |e| StoreError::database(session, "read the rows of", e);
    let mut stmt = conn
        .prepare(
            "SELECT seq, first_id, ids, body, mac FROM favur_records WHERE session = ?1 ORDER BY seq",
        )
        .map_err(db)?;
    let mut rows = stmt.query([session]).map_err(db)?;
    let mut next = 0i64;
    while let Some(r) = rows.next().map_err(db)? {
        let body = r
            .get_ref(3)
            .map_err(db)?
            .as_bytes()
            .map_err(|e| db(e.into()))?;
        let row = RowIn {
            seq: r.get(0).map_err(db)?,
            first_id: r.get(1).map_err(db)?,
            ids: r.get(2).map_err(db)?,
            body,
            mac: r
                .get_ref(4)
                .map_err(db)?
                .as_bytes_or_null()
                .map_err(|e| db(e.into()))?,
        };
        rows::replay(history, session, next, row, seal)?;
        next += 1;
    }
    Ok(next)
}
