//! What a database store holds for its session ([`Core`]): the history, the next row, the
//! claim, and the steps of a write every store takes the same way; and how a session is
//! opened ([`SessionOptions`]).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::history::account::{HeuristicCounter, TokenCounter};
use crate::history::view::Compaction;
use crate::history::{CheckedCompaction, DEFAULT_FRAMING_TOKENS, History};
use crate::model::entry::{Entry, EntryId};
use crate::store::rows::Row;
use crate::store::{NewEntry, StoreError};

/// The lease a claim holds by default: 30 s, renewed by every write.
///
/// ```
/// assert_eq!(favur_context::DEFAULT_LEASE.as_secs(), 30);
/// ```
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// How a database store opens a session: the claim's lease and owner, whether originals
/// stay in memory, the token counter and framing of a new session, and (PostgreSQL) a
/// statement timeout.
///
/// ```
/// use std::time::Duration;
/// use favur_context::SessionOptions;
/// let o = SessionOptions::new().lease(Duration::from_secs(5)).owner("worker-3");
/// assert_eq!(o.lease_duration(), Duration::from_secs(5));
/// assert!(format!("{o:?}").contains("worker-3"));
/// ```
#[derive(Clone)]
pub struct SessionOptions {
    pub(crate) lease: Duration,
    pub(crate) owner: Option<String>,
    pub(crate) keep_originals: bool,
    pub(crate) framing_tokens: u32,
    pub(crate) counter: Arc<dyn TokenCounter>,
    pub(crate) statement_timeout: Option<Duration>,
}

impl fmt::Debug for SessionOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionOptions")
            .field("lease", &self.lease)
            .field("owner", &self.owner)
            .field("keep_originals", &self.keep_originals)
            .field("framing_tokens", &self.framing_tokens)
            .field("statement_timeout", &self.statement_timeout)
            .finish_non_exhaustive()
    }
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions::new()
    }
}

impl SessionOptions {
    /// The defaults: a [`DEFAULT_LEASE`], a fresh owner token per open, originals
    /// evicted once they leave the view (as the journal), the [`HeuristicCounter`],
    /// [`DEFAULT_FRAMING_TOKENS`], no statement timeout.
    ///
    /// ```
    /// let o = favur_context::SessionOptions::new();
    /// assert_eq!(o.lease_duration(), favur_context::DEFAULT_LEASE);
    /// ```
    pub fn new() -> Self {
        SessionOptions {
            lease: DEFAULT_LEASE,
            owner: None,
            keep_originals: false,
            framing_tokens: DEFAULT_FRAMING_TOKENS,
            counter: Arc::new(HeuristicCounter),
            statement_timeout: None,
        }
    }

    /// How long a claim lasts without a write (every write renews it, and so does
    /// `renew`). Once it has run out another writer may take the session over, and this
    /// one is fenced. Keep it longer than the longest pause between writes (a model
    /// request).
    ///
    /// ```
    /// use std::time::Duration;
    /// let o = favur_context::SessionOptions::new().lease(Duration::from_millis(300));
    /// assert_eq!(o.lease_duration().as_millis(), 300);
    /// ```
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// The lease in force.
    ///
    /// ```
    /// assert_eq!(favur_context::SessionOptions::new().lease_duration().as_secs(), 30);
    /// ```
    pub fn lease_duration(&self) -> Duration {
        self.lease
    }

    /// This writer's owner token (by default a fresh one per open). A writer that opens
    /// again with its own token takes its claim back at once, even while the lease runs
    /// (after a lost connection, say); the older handle is then fenced.
    ///
    /// ```
    /// let o = favur_context::SessionOptions::new().owner("host-a/worker-1");
    /// assert!(format!("{o:?}").contains("host-a/worker-1"));
    /// ```
    pub fn owner(mut self, owner: impl Into<String>) -> Self {
        self.owner = Some(owner.into());
        self
    }

    /// Keep every original in memory instead of reading evicted ones back from the
    /// database (see [`OpenOptions::keep_originals`](crate::OpenOptions::keep_originals)).
    ///
    /// ```
    /// let o = favur_context::SessionOptions::new().keep_originals(true);
    /// assert!(format!("{o:?}").contains("keep_originals: true"));
    /// ```
    pub fn keep_originals(mut self, keep: bool) -> Self {
        self.keep_originals = keep;
        self
    }

    /// The per-message framing tokens of a session created by this open (an existing
    /// session keeps its own).
    ///
    /// ```
    /// let o = favur_context::SessionOptions::new().framing_tokens(0);
    /// assert!(format!("{o:?}").contains("framing_tokens: 0"));
    /// ```
    pub fn framing_tokens(mut self, framing: u32) -> Self {
        self.framing_tokens = framing;
        self
    }

    /// The token counter for new appends; an existing session counted with another one
    /// is refused ([`StoreError::Counter`]).
    ///
    /// ```
    /// use favur_context::{SessionOptions, TokenCounter};
    /// struct Bytes;
    /// impl TokenCounter for Bytes { fn count_text(&self, t: &str) -> u32 { t.len() as u32 } }
    /// let o = SessionOptions::new().counter(Bytes);
    /// # let _ = o;
    /// ```
    pub fn counter(mut self, counter: impl TokenCounter + 'static) -> Self {
        self.counter = Arc::new(counter);
        self
    }

    /// PostgreSQL only: the server cancels any statement of this store that runs longer
    /// (`SET statement_timeout`), and the write fails with [`StoreError::Database`],
    /// nothing written.
    ///
    /// ```
    /// use std::time::Duration;
    /// let o = favur_context::SessionOptions::new().statement_timeout(Duration::from_secs(2));
    /// assert!(format!("{o:?}").contains("2s"));
    /// ```
    pub fn statement_timeout(mut self, timeout: Duration) -> Self {
        self.statement_timeout = Some(timeout);
        self
    }

    /// The owner token of this open.
    pub(crate) fn owner_token(&self) -> String {
        self.owner.clone().unwrap_or_else(super::claim::owner_token)
    }

    /// The lease in milliseconds.
    pub(crate) fn lease_ms(&self) -> i64 {
        i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX)
    }

    /// An empty history with this counter and the session's framing.
    pub(crate) fn new_history(&self, framing: u32) -> History {
        History::with_shared(Arc::clone(&self.counter)).with_framing_tokens(framing)
    }

    /// `Err(Counter)` unless the session's recorded counter is this one's.
    pub(crate) fn check_counter(&self, session: &str, recorded: &str) -> Result<(), StoreError> {
        if recorded == self.counter.id() {
            return Ok(());
        }
        Err(StoreError::Counter {
            session: session.to_owned(),
            recorded: recorded.to_owned(),
            given: self.counter.id().to_owned(),
        })
    }
}

/// Why a store stopped writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stopped {
    Fenced,
    Poisoned,
}

/// What a write changes in memory once its row is committed.
#[derive(Debug)]
pub(crate) enum Change {
    Entries(Vec<Entry>),
    Compaction(CheckedCompaction),
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
    /// This writer's fencing epoch.
    pub(crate) epoch: i64,
    /// This writer's owner token.
    pub(crate) owner: String,
    stopped: Option<Stopped>,
}

impl Core {
    pub(crate) fn new(
        session: &str,
        history: History,
        next_seq: i64,
        epoch: i64,
        owner: String,
    ) -> Core {
        Core {
            session: session.to_owned(),
            history,
            next_seq,
            epoch,
            owner,
            stopped: None,
        }
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
        if entries.is_empty() {
            return Ok(None);
        }
        // Counting tokens runs the user's counter: a panic there changes nothing.
        let drafted = self.history.draft(entries);
        Ok(Some(Pending {
            row: Row::entries(self.next_seq, &drafted),
            change: Change::Entries(drafted),
        }))
    }

    /// The write applying `compaction`, checked against the view.
    pub(crate) fn compaction(&self, compaction: Compaction) -> Result<Pending, StoreError> {
        self.usable()?;
        let checked = self
            .history
            .check(compaction)
            .map_err(|source| StoreError::Record {
                session: self.session.clone(),
                source,
            })?;
        let row = Row::compaction(
            self.next_seq,
            self.history.next_id(),
            checked.summaries(),
            checked.compaction(),
        );
        Ok(Pending {
            row,
            change: Change::Compaction(checked),
        })
    }

    /// Records in memory a write whose row is committed; the id of its first entry.
    pub(crate) fn settle(&mut self, pending: Pending) -> Result<EntryId, StoreError> {
        let first = self.history.next_id();
        self.next_seq += 1;
        let result = match pending.change {
            Change::Entries(drafted) => drafted
                .into_iter()
                .try_for_each(|entry| self.history.insert(entry)),
            Change::Compaction(checked) => self.history.commit(checked),
        };
        if let Err(source) = result {
            // Drafted or checked against this very history: cannot happen. If it did,
            // memory is behind the database: stop writing.
            self.stopped = Some(Stopped::Poisoned);
            return Err(StoreError::Record {
                session: self.session.clone(),
                source,
            });
        }
        Ok(first)
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
                e
            }
        }
    }
}
