//! Why a record does not apply ([`RecordError`]) and why an original cannot be read back
//! ([`RecallError`]).

use std::io;
use std::path::PathBuf;

use crate::history::view::ApplyError;
use crate::model::entry::EntryId;

/// A record does not apply to the history: nothing was recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The compaction does not apply to the view.
    #[error(transparent)]
    Compaction(#[from] ApplyError),
    /// An entry whose id is not the next id.
    #[error("entry has id {found}, expected the next id {expected}")]
    IdOrder {
        /// The next id.
        expected: EntryId,
        /// The id found.
        found: EntryId,
    },
    /// An entry whose tool calls cannot be paired unambiguously (an empty id, or two
    /// calls with one id).
    #[error("entry {id}: {problem}")]
    CallId {
        /// The entry's id.
        id: EntryId,
        /// What is wrong.
        problem: crate::model::message::CallIdError,
    },
    /// An entry with a malformed reasoning, image or document part (an empty media type
    /// or source, an empty reasoning part).
    #[error("entry {id}: {problem}")]
    Part {
        /// The entry's id.
        id: EntryId,
        /// What is wrong.
        problem: crate::model::part_check::PartError,
    },
    /// An entry of kind summary outside a compaction (summaries are recorded by theirs).
    #[error("entry {id} is a summary outside a compaction record")]
    Summary {
        /// The entry's id.
        id: EntryId,
    },
    /// A checked compaction committed after the history changed; check it again.
    #[error("the history changed since the compaction was checked; check it again")]
    Stale,
    /// A write whose idempotency key is empty or too long ([`Store::record_once`](crate::Store::record_once)).
    #[error(transparent)]
    Key(#[from] super::KeyError),
}

/// Why [`History::recall`](super::History::recall) or the [`RecallTool`](crate::tools::RecallTool) could not return an original.
///
/// ```
/// use favur_context::store::RecallError;
/// use favur_context::EntryId;
/// let e = RecallError::UnknownId { id: EntryId(9), next: EntryId(3) };
/// assert_eq!(e.to_string(), "no entry #9 (ids run from #0 to #2)");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecallError {
    /// No entry has this id.
    #[error("no entry {id} ({})", if next.0 == 0 { "the history is empty".to_owned() } else { format!("ids run from #0 to #{}", next.0 - 1) })]
    UnknownId {
        /// The id asked for.
        id: EntryId,
        /// The next id (ids below it exist).
        next: EntryId,
    },
    /// The tool call's arguments are not `{"id": <integer>}`.
    #[error("invalid arguments: {message}")]
    InvalidArguments {
        /// What is wrong.
        message: String,
    },
    /// Reading the original from the journal failed.
    #[error("journal {}: cannot read entry {id} at byte offset {offset}: {source}", path.display())]
    Io {
        /// The journal file.
        path: PathBuf,
        /// The entry.
        id: EntryId,
        /// Where its record starts.
        offset: u64,
        /// The error from the operating system.
        source: io::Error,
    },
    /// Reading the original back from a database store failed (the database, or a
    /// damaged row).
    #[error("session `{session}`: cannot read entry {id} back: {message}")]
    Database {
        /// The session.
        session: String,
        /// The entry.
        id: EntryId,
        /// What went wrong.
        message: String,
    },
    /// The record read back is not the entry's (the file was changed under the history).
    #[error("journal {}: the record at byte offset {offset} does not hold entry {id}: {problem}", path.display())]
    Corrupt {
        /// The journal file.
        path: PathBuf,
        /// The entry.
        id: EntryId,
        /// Where its record starts.
        offset: u64,
        /// What is wrong.
        problem: String,
    },
}
