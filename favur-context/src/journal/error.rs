//! What can go wrong: a damaged line ([`Corruption`]) and every journal error
//! ([`JournalError`]).

use std::io;
use std::path::PathBuf;

use super::JOURNAL_FORMAT;
use crate::history::RecordError;
use crate::model::entry::EntryId;

/// What is wrong with a damaged journal line. Carried by [`JournalError::Corrupt`] and
/// [`Salvaged`](crate::journal::Salvaged).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Corruption {
    /// The line is not valid UTF-8.
    #[error("not valid UTF-8 (valid up to byte {valid_up_to} of the line)")]
    InvalidUtf8 {
        /// Bytes of the line that are valid UTF-8.
        valid_up_to: usize,
    },
    /// The line is not valid JSON.
    #[error("not valid JSON: {message}")]
    InvalidJson {
        /// The parser's message.
        message: String,
    },
    /// The line is longer than the limit ([`OpenOptions::max_line_bytes`](crate::journal::OpenOptions::max_line_bytes)).
    #[error("line longer than the limit of {limit} bytes")]
    LineTooLong {
        /// The limit in force.
        limit: usize,
    },
    /// The first line is not a journal header.
    #[error("the first line is not a journal header (`{{\"journal\":{{\"format\":...}}}}`)")]
    MissingHeader,
    /// The header is malformed.
    #[error("malformed journal header: {message}")]
    InvalidHeader {
        /// What is wrong.
        message: String,
    },
    /// A header after the first line.
    #[error("a journal header after the first line")]
    UnexpectedHeader,
    /// A JSON value that is not an object with one key naming the record type.
    #[error(
        "not a record (an object with one key: `entry`, `batch`, `keyed`, `compaction` or `request_overhead`)"
    )]
    NotARecord,
    /// A record type this version does not know.
    #[error("unknown record type `{kind}`")]
    UnknownRecord {
        /// The type found.
        kind: String,
    },
    /// An entry record without a retention class.
    #[error("entry{} has no retention class", fmt_id(*id))]
    MissingClass {
        /// The entry's id, if it could be read.
        id: Option<EntryId>,
    },
    /// An entry record with a retention class that does not exist.
    #[error("entry{} has unknown retention class {found} (expected \"forgettable\", \"fuzzy\" or \"strict\")", fmt_id(*id))]
    UnknownClass {
        /// The entry's id, if it could be read.
        id: Option<EntryId>,
        /// The class found, as JSON.
        found: String,
    },
    /// An entry record that is malformed in another way.
    #[error("malformed entry{}: {message}", fmt_id(*id))]
    InvalidEntry {
        /// The entry's id, if it could be read.
        id: Option<EntryId>,
        /// What is wrong.
        message: String,
    },
    /// A compaction record that is malformed.
    #[error("malformed compaction: {message}")]
    InvalidCompaction {
        /// What is wrong.
        message: String,
    },
    /// A request overhead record that is malformed.
    #[error("malformed request overhead record: {message}")]
    InvalidRequestOverhead {
        /// What is wrong.
        message: String,
    },
    /// A record that does not apply to the history read so far, with [`History`]'s own
    /// checks: an entry whose id is not the next id, a summary entry outside a compaction
    /// record, a compaction naming unknown ids or editing an entry twice, an entry whose
    /// tool calls cannot be paired or with a malformed part, a keyed record whose key is
    /// empty, too long or held by an earlier record.
    ///
    /// [`History`]: crate::History
    #[error(transparent)]
    Record(#[from] RecordError),
    /// A batch record that holds no entry.
    #[error("a batch record with no entries")]
    EmptyBatch,
}

pub(super) fn fmt_id(id: Option<EntryId>) -> String {
    id.map(|id| format!(" {id}")).unwrap_or_default()
}

/// Why a journal could not be opened or written.
///
/// ```
/// use favur_context::journal::{JournalError, JournaledHistory};
/// let dir = std::env::temp_dir().join(format!("favur-doc-err-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("history.jsonl");
/// std::fs::write(&path, "{\"journal\":{\"format\":9,\"framing_tokens\":4}}\n").unwrap();
/// let err = JournaledHistory::open(&path).unwrap_err();
/// assert!(matches!(err, JournalError::Version { found: 9, .. }));
/// assert!(err.to_string().contains("history.jsonl"));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// Reading, writing, syncing or truncating the file failed.
    #[error("cannot {action} journal {}: {source}", path.display())]
    Io {
        /// The journal file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The error from the operating system.
        source: io::Error,
    },
    /// Another writer holds the journal's lock.
    #[error("journal {} is locked by another writer (a process or history that has it open)", path.display())]
    Locked {
        /// The journal file.
        path: PathBuf,
    },
    /// The journal declares a format version this library does not read.
    #[error("journal {} has format version {found}; this library reads version {JOURNAL_FORMAT} (it was written by a newer favur-context?)", path.display())]
    Version {
        /// The journal file.
        path: PathBuf,
        /// The version found.
        found: u64,
    },
    /// The journal was counted with another token counter than the one given
    /// ([`OpenOptions::counter`](crate::journal::OpenOptions::counter)). Nothing was loaded.
    #[error("journal {} was counted with `{recorded}`, not `{given}`; open it with that counter", path.display())]
    Counter {
        /// The journal file.
        path: PathBuf,
        /// The counter id in its header.
        recorded: String,
        /// The id of the counter given.
        given: String,
    },
    /// A line in the journal is damaged. Nothing was loaded; open with
    /// [`OpenOptions::salvage`](crate::journal::OpenOptions::salvage) to load everything before it.
    #[error("journal {} is damaged at line {line} (byte offset {offset}): {problem}; nothing was loaded (`OpenOptions::salvage(true)` loads everything before it)", path.display())]
    Corrupt {
        /// The journal file.
        path: PathBuf,
        /// The damaged line, from 1.
        line: u64,
        /// Byte offset of the start of that line.
        offset: u64,
        /// What is wrong.
        problem: Corruption,
    },
    /// A record to write is longer than the line limit; nothing was written.
    #[error("journal {}: record of {len} bytes exceeds the line limit of {limit} bytes; nothing was written", path.display())]
    RecordTooLong {
        /// The journal file.
        path: PathBuf,
        /// The record's length.
        len: usize,
        /// The limit in force.
        limit: usize,
    },
    /// The record does not apply to the history (a compaction naming entries not in the
    /// view, say); nothing was written.
    #[error("journal {}: {source}; nothing was written", path.display())]
    Record {
        /// The journal file.
        path: PathBuf,
        /// Why it does not apply.
        source: RecordError,
    },
    /// An earlier write or sync failed and could not be rolled back, or a panic
    /// interrupted a write, so the file may hold more than memory: the journal takes no
    /// more writes. Reopen it: everything acknowledged is there, nothing unacknowledged
    /// of a batch or compaction is.
    #[error("journal {} takes no more writes after an earlier failure; reopen it", path.display())]
    Poisoned {
        /// The journal file.
        path: PathBuf,
    },
    /// The path is a symbolic link, which is not followed unless
    /// [`OpenOptions::follow_symlinks`](super::OpenOptions::follow_symlinks) says so
    /// (nothing was opened or created).
    #[error("journal {} is a symbolic link; it is not followed unless OpenOptions::follow_symlinks(true)", path.display())]
    Symlink {
        /// The journal path.
        path: PathBuf,
    },
    /// The path is not a regular file (a directory, a device such as `/dev/zero`, a
    /// FIFO): nothing was read or written.
    #[error("journal {} is not a regular file", path.display())]
    NotAFile {
        /// The journal path.
        path: PathBuf,
    },
    /// The file does not start with a journal header: it is not a journal, and nothing
    /// was written to it, truncated or moved, whatever
    /// [`salvage`](super::OpenOptions::salvage) says.
    #[error("{} is not a journal (its first line is not a journal header); it was left as it is", path.display())]
    NotAJournal {
        /// The file's path.
        path: PathBuf,
    },
    /// A sealed journal's line does not verify ([`OpenOptions::seal_key`](super::OpenOptions::seal_key)),
    /// or the seal and the key disagree (a sealed journal opened without its key, an
    /// unsealed one with a key). Nothing was loaded, and nothing was written to the file,
    /// whatever [`salvage`](super::OpenOptions::salvage) says.
    #[error("journal {} is tampered at line {line} (record {seq}): {problem}; nothing was loaded", path.display())]
    Tampered {
        /// The journal file.
        path: PathBuf,
        /// The line, from 1.
        line: u64,
        /// The record's sequence number in the chain (the header is 0, so `line - 1`).
        seq: u64,
        /// What is wrong.
        problem: crate::store_trait::seal::Tamper,
    },
    /// The file was deleted, replaced or truncated by someone else while the journal had
    /// it open: the last append was not acknowledged, and the journal takes no more
    /// writes (reopen it to see what the path holds now).
    #[error("journal {} was {change} while open; the last append was not acknowledged and nothing more is written", path.display())]
    Changed {
        /// The journal path.
        path: PathBuf,
        /// What happened to it: `deleted`, `replaced by another file`, `truncated or
        /// written by another process`.
        change: &'static str,
    },
}
