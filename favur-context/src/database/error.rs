//! What can go wrong in a database store ([`StoreError`]): claims, fencing, damaged rows,
//! the schema, the database itself.

use crate::history::RecordError;
use crate::journal::{Corruption, JournalError};

/// Why a database store ([`SqliteStore`](crate::store::SqliteStore),
/// [`PgStore`](crate::store::PgStore)) could not open a session or write to it. Each error names
/// the session, and a damaged row its sequence number.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Another writer holds a live claim on the session (one writer per session).
    #[error(
        "session `{session}` is claimed by writer `{owner}` for {remaining_ms} ms more; one writer per session"
    )]
    Claimed {
        /// The session.
        session: String,
        /// The other writer's owner token.
        owner: String,
        /// How long its lease still runs, in milliseconds (it renews it on every write).
        remaining_ms: i64,
    },
    /// This writer's claim was taken over (its lease expired and another writer opened
    /// the session): it never writes to the session again. Nothing was written.
    #[error(
        "session `{session}`: this writer's claim (epoch {epoch}) was taken over by another writer; it can never write again (nothing was written)"
    )]
    Fenced {
        /// The session.
        session: String,
        /// The fencing epoch this writer held.
        epoch: u64,
    },
    /// A row of the session does not replay: nothing was loaded.
    #[error("session `{session}` is damaged at sequence {seq}: {problem}; nothing was loaded")]
    Corrupt {
        /// The session.
        session: String,
        /// The row's sequence number.
        seq: u64,
        /// What is wrong with it.
        problem: Corruption,
    },
    /// A row's sequence number is not the next one (a row is missing): nothing was
    /// loaded.
    #[error(
        "session `{session}`: row with sequence {found} where {expected} was expected (a row is missing); nothing was loaded"
    )]
    Sequence {
        /// The session.
        session: String,
        /// The sequence number expected.
        expected: u64,
        /// The one found.
        found: u64,
    },
    /// The database's schema is newer than this library's.
    #[error(
        "the database has schema version {found}; this library knows versions up to {supported} (it was written by a newer favur-context?)"
    )]
    Schema {
        /// The version found.
        found: i64,
        /// The newest version this library knows.
        supported: i64,
    },
    /// The session was counted with another token counter than the one given.
    #[error(
        "session `{session}` was counted with `{recorded}`, not `{given}`; open it with that counter"
    )]
    Counter {
        /// The session.
        session: String,
        /// The counter id it records.
        recorded: String,
        /// The id of the counter given.
        given: String,
    },
    /// The record does not apply to the history (a compaction naming entries not in the
    /// view, say); nothing was written.
    #[error("session `{session}`: {source}; nothing was written")]
    Record {
        /// The session.
        session: String,
        /// Why it does not apply.
        source: RecordError,
    },
    /// The database failed (I/O, a dropped connection, a statement timeout, a server
    /// restart) before a write was committed: nothing was written. (A failure during the
    /// commit itself is [`Uncertain`](StoreError::Uncertain).)
    #[error("session `{session}`: cannot {action}: {source}")]
    Database {
        /// The session.
        session: String,
        /// What was being done.
        action: &'static str,
        /// The database client's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A write's `COMMIT` failed after it was sent (the connection was lost during it,
    /// the server went away): the write **may have landed**. Do not write it again
    /// blindly: reopen the session and look (the reopened history holds it or not). The
    /// store takes no more writes meanwhile ([`Poisoned`](StoreError::Poisoned)).
    #[error(
        "session `{session}`: the commit of a write failed after it was sent ({source}); the write may have landed: reopen the session and look before writing it again"
    )]
    Uncertain {
        /// The session.
        session: String,
        /// The database client's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A commit failed in a way that leaves its outcome unknown (the connection was lost
    /// during `COMMIT`), so the database may hold more than memory: the store takes no
    /// more writes. Reopen the session: everything acknowledged is there.
    #[error(
        "session `{session}` takes no more writes: an earlier commit's outcome is unknown; reopen it"
    )]
    Poisoned {
        /// The session.
        session: String,
    },
    /// A row of a sealed session does not verify
    /// ([`SessionOptions::seal_key`](crate::store::SessionOptions::seal_key)): it, or a row before
    /// it, was edited, added or removed, or the key is another; or the seal and the key
    /// disagree (a sealed session opened without its key, an unsealed one with a key).
    /// Nothing was loaded.
    #[error("session `{session}` is tampered at sequence {seq}: {problem}; nothing was loaded")]
    Tampered {
        /// The session.
        session: String,
        /// The sequence number where the chain breaks.
        seq: u64,
        /// What is wrong.
        problem: crate::store_trait::seal::Tamper,
    },
    /// A journal to import is unreadable or does not replay.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// A session to import into already holds records.
    #[error("session `{session}` already holds {records} records; import only into a new session")]
    NotEmpty {
        /// The session.
        session: String,
        /// Its records.
        records: u64,
    },
}

impl StoreError {
    /// A database failure while doing `action` on `session`.
    pub(crate) fn database(
        session: &str,
        action: &'static str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> StoreError {
        StoreError::Database {
            session: session.to_owned(),
            action,
            source: Box::new(source),
        }
    }
}
