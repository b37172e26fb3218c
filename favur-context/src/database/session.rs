//! What a database store holds for its session ([`Core`]): the history, the next row, the
//! claim, and the steps of a write every store takes the same way; and how a session is
//! opened ([`SessionOptions`]).

use std::time::Duration;

use crate::database::StoreError;
use crate::database::rows::Row;
use crate::database::sealing::RowSeal;
use crate::history::view::Compaction;
use crate::history::{Change, CheckedCompaction, History};
use crate::history::{NewEntry, RecordError};
use crate::journal::OpenOptions;
use crate::model::entry::EntryId;

/// The lease a claim holds by default: 30 s, renewed by every write.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// How a database store opens a session: the claim's lease and owner, the history's
/// settings (the journal's [`OpenOptions`]: token counter, framing of a new session,
/// whether originals stay in memory), and (PostgreSQL) a statement timeout.
///
/// ```
/// use std::time::Duration;
/// use favur_context::journal::OpenOptions;
/// use favur_context::store::SessionOptions;
/// let o = SessionOptions::new()
///     .lease(Duration::from_secs(5))
///     .owner("worker-3")
///     .history(OpenOptions::new().keep_originals(true));
/// assert_eq!(o.lease_duration(), Duration::from_secs(5));
/// assert!(format!("{o:?}").contains("worker-3"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    pub(crate) lease: Option<Duration>,
    pub(crate) owner: Option<String>,
    pub(crate) history: OpenOptions,
    pub(crate) statement_timeout: Option<Duration>,
}

impl SessionOptions {
    /// The defaults: a [`DEFAULT_LEASE`], a fresh owner token per open, the history
    /// settings of [`OpenOptions::new`] (originals evicted once they leave the view, read
    /// back from the database), no statement timeout.
    pub fn new() -> Self {
        SessionOptions::default()
    }

    setters! {
        /// How long a claim lasts without a write (every write renews it, and so does
        /// `renew`). Once it has run out another writer may take the session over, and this
        /// one is fenced. Keep it longer than the longest pause between writes (a model
        /// request).
        lease(lease: Duration) => lease = Some(lease);
    }

    /// The lease in force.
    pub fn lease_duration(&self) -> Duration {
        self.lease.unwrap_or(DEFAULT_LEASE)
    }

    setters! {
        /// This writer's owner token (by default a fresh one per open). A writer that opens
        /// again with its own token takes its claim back at once, even while the lease runs
        /// (after a lost connection, say); the older handle is then fenced.
        owner(owner: impl Into<String>) => owner = Some(owner.into());

        /// The history's settings, as for a journal: the token counter (an existing session
        /// counted with another one is refused, [`StoreError::Counter`]), the framing tokens
        /// of a new session, and [`keep_originals`](OpenOptions::keep_originals). The file
        /// settings (durability, salvage, line limit) do not apply.
        history(options: OpenOptions) => history;

        /// PostgreSQL only: the server cancels any statement of this store that runs longer
        /// (`SET statement_timeout`), and the write fails with [`StoreError::Database`],
        /// nothing written.
        statement_timeout(timeout: Duration) => statement_timeout = Some(timeout);
    }

    /// Seals the session with `key` (as [`OpenOptions::seal_key`] for a journal): a new
    /// session is sealed, every row written carries its MAC (the `mac` column) chained to
    /// the row before it, and opening and every original read back verify them. An
    /// edited, added or removed row, or another key, is [`StoreError::Tampered`] naming the
    /// session and sequence, and nothing is loaded. A session whose rows carry no MAC is
    /// refused with a key ([`Tamper::NotSealed`](crate::store::Tamper::NotSealed)), and a sealed
    /// one without ([`Tamper::KeyNeeded`](crate::store::Tamper::KeyNeeded)); to seal an existing
    /// session, export it and import it into a new one with the key.
    ///
    /// ```
    /// use favur_context::store::{SealKey, SessionOptions};
    /// let o = SessionOptions::new().seal_key(SealKey::new([3u8; 32]).unwrap());
    /// assert!(format!("{o:?}").contains("sealed: true"));
    /// # #[cfg(feature = "sqlite")] {
    /// use favur_context::journal::JournalError;
    /// use favur_context::store::{SqliteStore, StoreError, Tamper};
    /// use favur_context::{fuzzy, Store};
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = dir.path().join("agents.db");
    /// let mut store = SqliteStore::open_with(&db, "job", &o)?;
    /// store.append(fuzzy!(user: "deploy to staging"))?;
    /// let mut journal = Vec::new();
    /// store.export_journal(&mut journal)?; // a sealed journal
    /// // Edited on its way (same length), it is refused on import, and nothing is written.
    /// let edited = String::from_utf8(journal).unwrap().replace("staging", "prod!!!");
    /// let err = SqliteStore::import_journal(&db, "copy", edited.as_bytes(), &o).unwrap_err();
    /// assert!(matches!(err, StoreError::Journal(JournalError::Tampered { seq: 1, problem: Tamper::Mac, .. })));
    /// // Without the key, the sealed session is not loaded unverified.
    /// drop(store);
    /// let err = SqliteStore::open(&db, "job").unwrap_err();
    /// assert!(matches!(err, StoreError::Tampered { seq: 0, problem: Tamper::KeyNeeded, .. }));
    /// # }
    /// # Ok::<(), favur_context::store::StoreError>(())
    /// ```
    pub fn seal_key(mut self, key: crate::store_trait::seal::SealKey) -> Self {
        self.history = self.history.seal_key(key);
        self
    }

    /// The seal of `session` with `framing` tokens, before its rows are replayed.
    pub(crate) fn row_seal(&self, session: &str, framing: u32) -> super::sealing::RowSeal {
        let id = super::sealing::chain_id(session, framing, self.counter_id());
        super::sealing::RowSeal::new(self.history.seal.as_ref(), id)
    }

    /// The owner token of this open.
    pub(crate) fn owner_token(&self) -> String {
        self.owner.clone().unwrap_or_else(super::claim::owner_token)
    }

    /// The lease in milliseconds.
    pub(crate) fn lease_ms(&self) -> i64 {
        i64::try_from(self.lease_duration().as_millis()).unwrap_or(i64::MAX)
    }

    /// The token counter's id.
    pub(crate) fn counter_id(&self) -> &str {
        self.history.counter.id()
    }

    /// These options for a session whose framing tokens are `framing` (an import's).
    pub(crate) fn with_framing(&self, framing: u32) -> SessionOptions {
        let mut options = self.clone();
        options.history = options.history.framing_tokens(framing);
        options
    }

    /// An empty history with this counter and the session's framing.
    pub(crate) fn new_history(&self, framing: u32) -> History {
        self.with_framing(framing).history.new_history()
    }

    /// `Err(Counter)` unless the session's recorded counter is this one's.
    pub(crate) fn check_counter(&self, session: &str, recorded: &str) -> Result<(), StoreError> {
        if recorded == self.counter_id() {
            return Ok(());
        }
        Err(StoreError::Counter {
            session: session.to_owned(),
            recorded: recorded.to_owned(),
            given: self.counter_id().to_owned(),
        })
    }
}

/// Why a store stopped writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stopped {
    Fenced,
    Poisoned,
}

/// A write ready to be persisted: its row, and what it changes once committed.
#[derive(Debug)]
pub(crate) struct Pending {
    pub(crate) row: Row,
    change: Change,
}

/// How a write failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Before `COMMIT` was sent: rolled back, nothing written.
    Before(StoreError),
    /// The session's epoch is no longer ours.
    Fenced(StoreError),
    /// During `COMMIT`: the outcome is unknown.
    Commit(StoreError),
}

/// The session a database store holds: the history, its next row and its claim.
#[derive(Debug)]
pub(crate) struct Core {
    pub(crate) session: String,
    pub(crate) history: History,
    /// The next row's sequence number.
    pub(crate) next_seq: i64,
    /// Whether this open created the session's records (`open_or_create` ran its setup).
    pub(crate) created: bool,
    /// This writer's fencing epoch.
    pub(crate) epoch: i64,
    /// This writer's owner token.
    pub(crate) owner: String,
    /// The session's seal: rows written are sealed with it (a no-op when unsealed).
    pub(crate) seal: RowSeal,
    stopped: Option<Stopped>,
}

impl Core {
    /// The session as opened: `history` replayed from its first `next_seq` rows with
    /// `seal`, which then seals the rows written (see [`RowSeal::writing`]).
    pub(crate) fn new(
        session: &str,
        history: History,
        mut seal: RowSeal,
        next_seq: i64,
        epoch: i64,
        owner: String,
    ) -> Core {
        seal.writing(next_seq);
        Core {
            session: session.to_owned(),
            history,
            next_seq,
            created: false,
            epoch,
            owner,
            seal,
            stopped: None,
        }
    }

    /// `row` with its MAC, in a sealed session.
    fn sealed(&self, mut row: Row) -> Row {
        row.mac = self.seal.seal(&row.body);
        row
    }

    /// The newest row of a sealed session (`None` when unsealed or empty).
    pub(crate) fn seal_head(&self) -> Option<crate::store_trait::seal::SealHead> {
        self.seal.head()
    }

    /// `Err` if the store takes no more writes (fenced or poisoned).
    pub(crate) fn usable(&self) -> Result<(), StoreError> {
        match self.stopped {
            None => Ok(()),
            Some(Stopped::Fenced) => Err(StoreError::Fenced {
                session: self.session.clone(),
                epoch: self.epoch.max(0) as u64,
            }),
            Some(Stopped::Poisoned) => Err(StoreError::Poisoned {
                session: self.session.clone(),
            }),
        }
    }

    /// Whether the store was fenced.
    pub(crate) fn is_fenced(&self) -> bool {
        self.stopped == Some(Stopped::Fenced)
    }

    /// The write recording `entries` (`None` for an empty batch).
    pub(crate) fn entries(&self, entries: Vec<NewEntry>) -> Result<Option<Pending>, StoreError> {
        self.usable()?;
        let Some(write) = self.recorded(self.history.draft_entries(entries))? else {
            return Ok(None);
        };
        Ok(Some(Pending {
            row: self.sealed(Row::entries(self.next_seq, &write)),
            change: Change::Entries(write),
        }))
    }

    /// The write applying `compaction`, checked against the view.
    pub(crate) fn compaction(&self, compaction: Compaction) -> Result<Pending, StoreError> {
        self.usable()?;
        let checked = self.recorded(self.history.check(compaction))?;
        self.checked(checked)
    }

    /// The write of a compaction already checked against this history: refused (nothing
    /// written) if it was checked before a later write or on another history.
    pub(crate) fn checked(&self, checked: CheckedCompaction) -> Result<Pending, StoreError> {
        self.usable()?;
        let checked = self.recorded(self.history.current(checked))?;
        let row = self.sealed(Row::compaction(
            self.next_seq,
            self.history.next_id(),
            checked.summaries(),
            checked.compaction(),
        ));
        Ok(Pending {
            row,
            change: Change::Compaction(checked),
        })
    }

    /// The write setting the request overhead to `tokens` (`None` if it is already that:
    /// setting it again after every open writes nothing).
    pub(crate) fn overhead(&self, tokens: u64) -> Result<Option<Pending>, StoreError> {
        self.usable()?;
        if self.history.request_overhead_tokens() == tokens {
            return Ok(None);
        }
        Ok(Some(Pending {
            row: self.sealed(Row::overhead(self.next_seq, self.history.next_id(), tokens)),
            change: Change::Overhead(tokens),
        }))
    }

    /// Records in memory a write whose row is committed; the id of its first entry.
    pub(crate) fn settle(&mut self, pending: Pending) -> Result<EntryId, StoreError> {
        let first = self.history.next_id();
        self.next_seq += 1;
        self.seal.advance(pending.row.mac.as_deref());
        if let Err(source) = self.history.settle(pending.change) {
            // Drafted or checked against this very history: cannot happen. If it did,
            // memory is behind the database: stop writing.
            self.stopped = Some(Stopped::Poisoned);
            return Err(self.record_error(source));
        }
        Ok(first)
    }

    /// A record refused by the history, for this session.
    fn record_error(&self, source: RecordError) -> StoreError {
        StoreError::Record {
            session: self.session.clone(),
            source,
        }
    }

    /// What the history answered, a refusal as this session's [`record_error`](Self::record_error).
    fn recorded<T>(&self, answer: Result<T, RecordError>) -> Result<T, StoreError> {
        answer.map_err(|source| self.record_error(source))
    }

    /// `Err` unless the session takes an import: writable and holding no records.
    pub(crate) fn importable(&self) -> Result<(), StoreError> {
        self.usable()?;
        if self.next_seq == 0 {
            return Ok(());
        }
        Err(StoreError::NotEmpty {
            session: self.session.clone(),
            records: self.next_seq.max(0) as u64,
        })
    }

    /// Seals the rows of an import (each after the one before it), in a sealed session.
    pub(crate) fn seal_rows(&self, rows: &mut [Row]) {
        let mut seal = self.seal.clone();
        for row in rows {
            row.mac = seal.seal(&row.body);
            seal.advance(row.mac.as_deref());
        }
    }

    /// Records in memory the imported `rows`, committed.
    pub(crate) fn settle_rows(&mut self, rows: &[Row]) -> Result<(), StoreError> {
        for row in rows {
            let (session, next) = (self.session.as_str(), self.next_seq);
            super::rows::replay(
                &mut self.history,
                session,
                next,
                row.as_in(),
                &mut self.seal,
            )?;
            self.next_seq += 1;
        }
        Ok(())
    }

    /// The error of a failed write; a fenced or uncertain one stops all writing.
    pub(crate) fn failed(&mut self, failure: Failure) -> StoreError {
        match failure {
            Failure::Before(e) => e,
            Failure::Fenced(e) => {
                self.stopped = Some(Stopped::Fenced);
                e
            }
            Failure::Commit(e) => {
                self.stopped = Some(Stopped::Poisoned);
                match e {
                    StoreError::Database {
                        session, source, ..
                    } => StoreError::Uncertain { session, source },
                    other => other,
                }
            }
        }
    }
}

/// A database store's claim on its session: the session, this writer's owner token and
/// fencing epoch, and whether it was fenced ([`SqliteStore::claim`](crate::store::SqliteStore),
/// [`PgStore::claim`](crate::store::PgStore)).
#[derive(Debug, Clone, Copy)]
pub struct Claim<'a>(pub(crate) &'a Core);

impl<'a> Claim<'a> {
    /// The session.
    pub fn session(&self) -> &'a str {
        &self.0.session
    }

    /// This writer's owner token.
    pub fn owner(&self) -> &'a str {
        &self.0.owner
    }

    /// This writer's fencing epoch: 1 for the session's first claim, one more for every
    /// claim after it.
    pub fn epoch(&self) -> u64 {
        self.0.epoch.max(0) as u64
    }

    /// Whether this writer was fenced: another writer took the session over, and this
    /// one never writes again.
    pub fn is_fenced(&self) -> bool {
        self.0.is_fenced()
    }
}
