//! Durable history: an append-only JSON-lines journal behind a [`History`].
//!
//! A [`JournaledHistory`] writes every entry it records and every compaction it applies to
//! a journal file before acknowledging it, and opening the file again rebuilds exactly the
//! same history and view, ids included. Memory stays bounded by the view: the originals of
//! entries that left the view live only in the file and are read back by
//! [`JournaledHistory::recall`].
//!
//! # Format (version 1)
//!
//! UTF-8 text, one JSON object per line, each line ending in `\n`. Each object has exactly
//! one key, the record type:
//!
//! | line | record | meaning |
//! |---|---|---|
//! | first | `{"journal":{"format":1,"framing_tokens":4}}` | header: format version and the history's framing tokens |
//! | then | `{"entry":{"id":0,"retention":"strict","tokens":5,"site":{...},"kind":"pinned","message":{...}}}` | an entry appended or pinned (`kind` is absent for an appended entry), exactly as [`Entry`] serializes |
//! | then | `{"compaction":{"tier":2,"edits":[...]}}` | a [`Compaction`] applied, exactly as it serializes; its summaries carry their ids |
//!
//! Entry records carry ids 0, 1, 2, ... in order, except the ids taken by the summaries
//! of a compaction record, which are the next ids when that record is applied. Records
//! are replayed in file order with [`History::apply`]'s own checks, so a journal that
//! opens is one that a history could have written.
//!
//! # Faults
//!
//! - A last line without its `\n` is a torn write (the process died mid-append; that
//!   append was never acknowledged). Opening cuts it off and says so in the
//!   [`OpenReport`].
//! - Any other bad line is an error, [`JournalError::Corrupt`], naming the line number and
//!   byte offset and saying what is wrong ([`Corruption`]). Nothing is skipped silently.
//!   [`OpenOptions::salvage`] loads everything before it instead and moves the damaged
//!   rest aside to a file next to the journal.
//! - A header declaring a newer format is [`JournalError::Version`].
//! - Lines are bounded ([`OpenOptions::max_line_bytes`]); a longer one is
//!   [`Corruption::LineTooLong`], and a record that would be longer is refused on write.

use std::borrow::Cow;
use std::fmt;
use std::fs::{File, TryLockError};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::account::{HeuristicCounter, TokenCounter};
use crate::classify::{Classified, Classify};
use crate::entry::{Entry, EntryId, EntryKind};
use crate::history::{self, DEFAULT_FRAMING_TOKENS, History};
use crate::message::ToolCall;
use crate::retention::Retention;
use crate::site::CallSite;
use crate::tool::ClassifiedTool;
use crate::view::{ApplyError, Compaction, Edit};

/// The journal format version this library writes and reads.
///
/// ```
/// assert_eq!(favur_context::JOURNAL_FORMAT, 1);
/// ```
pub const JOURNAL_FORMAT: u32 = 1;

/// The longest line (record) accepted by default: 64 MiB.
///
/// ```
/// assert_eq!(favur_context::DEFAULT_MAX_LINE_BYTES, 64 * 1024 * 1024);
/// ```
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// What an acknowledged write survives. Every setting writes each record to the file (one
/// `write` call, handing it to the operating system) before the append returns; they
/// differ in when the file is synced to the disk (`fdatasync`).
///
/// | setting | survives a process crash (panic, abort, `SIGKILL`, OOM kill) | survives power loss or a kernel crash |
/// |---|---|---|
/// | [`Flush`](Durability::Flush) (default) | every acknowledged append | appends up to the operating system's last writeback (typically the last ~30 s may be lost) |
/// | [`SyncEvery(n)`](Durability::SyncEvery) | every acknowledged append | all but at most the last `n - 1` acknowledged appends |
/// | [`SyncEach`](Durability::SyncEach) | every acknowledged append | every acknowledged append (as far as the disk honours syncs) |
///
/// After a power loss the last line may be torn or partly zeroed; opening cuts a torn
/// last line off, and [`OpenOptions::salvage`] recovers from a damaged one.
///
/// ```
/// use favur_context::Durability;
/// assert_eq!(Durability::default(), Durability::Flush);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Durability {
    /// Write each record to the operating system before acknowledging it; never sync.
    #[default]
    Flush,
    /// Also sync the file to disk after every `n` records (`0` is treated as `1`), and
    /// when the history is dropped.
    SyncEvery(u32),
    /// Sync the file to disk after every record, before acknowledging it.
    SyncEach,
}

/// Where one record sits in the journal file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Locator {
    offset: u64,
    /// Length of the line including its `\n`.
    len: u32,
}

/// What is wrong with a damaged journal line. Carried by [`JournalError::Corrupt`] and
/// [`Salvaged`].
///
/// ```
/// use favur_context::Corruption;
/// let c = Corruption::UnknownRecord { kind: "snapshot".into() };
/// assert_eq!(c.to_string(), "unknown record type `snapshot`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
    /// The line is longer than the limit ([`OpenOptions::max_line_bytes`]).
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
    #[error("not a record (an object with one key: `entry` or `compaction`)")]
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
    /// An entry record whose id is not the next id.
    #[error("entry has id {found}, expected the next id {expected}")]
    IdOrder {
        /// The next id.
        expected: EntryId,
        /// The id found.
        found: EntryId,
    },
    /// An entry record of kind summary (summaries are only written by compactions).
    #[error("entry {id} is a summary outside a compaction record")]
    UnexpectedSummary {
        /// The entry's id.
        id: EntryId,
    },
    /// A compaction record that does not apply to the history read so far (it names
    /// unknown ids, edits an entry twice, ...).
    #[error("compaction does not apply: {0}")]
    Compaction(ApplyError),
}

fn fmt_id(id: Option<EntryId>) -> String {
    id.map(|id| format!(" {id}")).unwrap_or_default()
}

/// Why a journal could not be opened or written.
///
/// ```
/// use favur_context::{JournalError, JournaledHistory};
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
    /// A line in the journal is damaged. Nothing was loaded; open with
    /// [`OpenOptions::salvage`] to load everything before it.
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
    /// The compaction does not apply to the view; nothing was written.
    #[error(transparent)]
    Apply(#[from] ApplyError),
    /// Inside [`JournaledHistory::record_with`], the history was shrunk or replaced rather
    /// than added to, so it no longer matches the journal; the journal takes no more
    /// writes. Reopen it: everything acknowledged before is there.
    #[error("journal {}: the history was {what} inside `record_with`, which a journal cannot record; it takes no more writes; reopen it", path.display())]
    Diverged {
        /// The journal file.
        path: PathBuf,
        /// What happened to the history.
        what: &'static str,
    },
    /// An earlier write or sync failed and could not be rolled back (or failed after
    /// [`JournaledHistory::record_with`] had changed the history), so the journal takes
    /// no more writes. Reopen it: everything acknowledged is there.
    #[error("journal {} takes no more writes after an earlier failure; reopen it", path.display())]
    Poisoned {
        /// The journal file.
        path: PathBuf,
    },
}

/// Why [`JournaledHistory::recall`] or the [`RecallTool`](crate::RecallTool) could not
/// return an original.
///
/// ```
/// use favur_context::{EntryId, RecallError};
/// let e = RecallError::UnknownId { id: EntryId(9), next: EntryId(3) };
/// assert_eq!(e.to_string(), "no entry #9 (ids run from #0 to #2)");
/// ```
#[derive(Debug, thiserror::Error)]
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

/// A torn last line that opening cut off: an append that was never acknowledged.
///
/// ```
/// let t = favur_context::TornTail { line: 3, offset: 120, bytes: 17 };
/// assert_eq!(t.bytes, 17);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// Its line number, from 1.
    pub line: u64,
    /// Byte offset where it started (the file's length now).
    pub offset: u64,
    /// Bytes cut off.
    pub bytes: u64,
}

/// Damage that [`OpenOptions::salvage`] recovered from: everything before it was loaded.
///
/// ```
/// use favur_context::{Corruption, Salvaged};
/// let s = Salvaged { line: 5, offset: 300, problem: Corruption::NotARecord, moved_to: None, bytes: 40 };
/// assert_eq!(s.line, 5);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Salvaged {
    /// The first damaged line, from 1.
    pub line: u64,
    /// Byte offset where it started (the journal's length now).
    pub offset: u64,
    /// What is wrong with it.
    pub problem: Corruption,
    /// Where the bytes from the damaged line to the end were moved (`None` when reading
    /// without a file, with [`OpenOptions::read`]).
    pub moved_to: Option<PathBuf>,
    /// How many bytes that is.
    pub bytes: u64,
}

/// What opening a journal found.
///
/// ```
/// let report = favur_context::OpenReport::default();
/// assert!(report.is_clean());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OpenReport {
    /// The journal was created (or was empty) and a header was written.
    pub created: bool,
    /// Records loaded, not counting the header.
    pub records: u64,
    /// A torn last line that was cut off.
    pub torn_tail: Option<TornTail>,
    /// Damage recovered from with [`OpenOptions::salvage`].
    pub salvaged: Option<Salvaged>,
}

impl OpenReport {
    /// Whether the journal opened without cutting or salvaging anything.
    ///
    /// ```
    /// let report = favur_context::OpenReport { torn_tail: Some(favur_context::TornTail { line: 2, offset: 50, bytes: 3 }), ..Default::default() };
    /// assert!(!report.is_clean());
    /// ```
    pub fn is_clean(&self) -> bool {
        self.torn_tail.is_none() && self.salvaged.is_none()
    }
}

/// How to open a journal: durability, fault handling, limits, token counter.
///
/// ```
/// use favur_context::{strict, Durability, OpenOptions};
/// let path = std::env::temp_dir().join(format!("favur-doc-opts-{}.jsonl", std::process::id()));
/// # let _ = std::fs::remove_file(&path);
/// let mut history = OpenOptions::new()
///     .durability(Durability::SyncEvery(64))
///     .max_line_bytes(1 << 20)
///     .open(&path)?;
/// history.append(strict!(user: "keep this"))?;
/// assert_eq!(history.durability(), Durability::SyncEvery(64));
/// # drop(history); std::fs::remove_file(&path).unwrap();
/// # Ok::<(), favur_context::JournalError>(())
/// ```
#[derive(Clone)]
pub struct OpenOptions {
    durability: Durability,
    salvage: bool,
    max_line_bytes: usize,
    keep_originals: bool,
    framing_tokens: u32,
    counter: Arc<dyn TokenCounter>,
}

impl fmt::Debug for OpenOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenOptions")
            .field("durability", &self.durability)
            .field("salvage", &self.salvage)
            .field("max_line_bytes", &self.max_line_bytes)
            .field("keep_originals", &self.keep_originals)
            .field("framing_tokens", &self.framing_tokens)
            .finish_non_exhaustive()
    }
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions::new()
    }
}

impl OpenOptions {
    /// The defaults: [`Durability::Flush`], no salvage, [`DEFAULT_MAX_LINE_BYTES`],
    /// originals evicted once they leave the view, the [`HeuristicCounter`], and
    /// [`DEFAULT_FRAMING_TOKENS`] for a new journal.
    ///
    /// ```
    /// let o = favur_context::OpenOptions::new();
    /// assert!(format!("{o:?}").contains("Flush"));
    /// ```
    pub fn new() -> Self {
        OpenOptions {
            durability: Durability::Flush,
            salvage: false,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            keep_originals: false,
            framing_tokens: DEFAULT_FRAMING_TOKENS,
            counter: Arc::new(HeuristicCounter),
        }
    }

    /// When writes are synced to disk (see [`Durability`]).
    ///
    /// ```
    /// use favur_context::{Durability, OpenOptions};
    /// let o = OpenOptions::new().durability(Durability::SyncEach);
    /// assert!(format!("{o:?}").contains("SyncEach"));
    /// ```
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// On a damaged line, load everything before it instead of failing: the damaged line
    /// and everything after it are moved to `<journal>.damaged-<offset>` next to the
    /// journal, the journal is cut back to its last good record, and the
    /// [`OpenReport::salvaged`] says so. Off by default.
    ///
    /// ```
    /// let o = favur_context::OpenOptions::new().salvage(true);
    /// assert!(format!("{o:?}").contains("salvage: true"));
    /// ```
    pub fn salvage(mut self, salvage: bool) -> Self {
        self.salvage = salvage;
        self
    }

    /// The longest line accepted when reading, and the longest record written (a longer
    /// one is refused with [`JournalError::RecordTooLong`]). Capped at `u32::MAX`.
    ///
    /// ```
    /// let o = favur_context::OpenOptions::new().max_line_bytes(4096);
    /// assert!(format!("{o:?}").contains("4096"));
    /// ```
    pub fn max_line_bytes(mut self, limit: usize) -> Self {
        self.max_line_bytes = limit.min(u32::MAX as usize - 1);
        self
    }

    /// Keep every original in memory instead of evicting those that left the view (then
    /// [`History::entry`] finds every entry). Off by default: memory stays bounded by the
    /// view.
    ///
    /// ```
    /// let o = favur_context::OpenOptions::new().keep_originals(true);
    /// assert!(format!("{o:?}").contains("keep_originals: true"));
    /// ```
    pub fn keep_originals(mut self, keep: bool) -> Self {
        self.keep_originals = keep;
        self
    }

    /// The per-message framing tokens of a journal created by this open. An existing
    /// journal keeps the value in its header.
    ///
    /// ```
    /// let o = favur_context::OpenOptions::new().framing_tokens(0);
    /// assert!(format!("{o:?}").contains("framing_tokens: 0"));
    /// ```
    pub fn framing_tokens(mut self, framing: u32) -> Self {
        self.framing_tokens = framing;
        self
    }

    /// The token counter for new appends (counts already recorded are kept).
    ///
    /// ```
    /// use favur_context::{OpenOptions, TokenCounter};
    /// struct Bytes;
    /// impl TokenCounter for Bytes { fn count_text(&self, t: &str) -> u32 { t.len() as u32 } }
    /// let o = OpenOptions::new().counter(Bytes);
    /// # let _ = o;
    /// ```
    pub fn counter(mut self, counter: impl TokenCounter + 'static) -> Self {
        self.counter = Arc::new(counter);
        self
    }

    /// Opens (or creates) the journal at `path`, takes its lock, and rebuilds the history
    /// and view it records. A torn last line is cut off; see [`JournaledHistory::report`].
    ///
    /// # Errors
    ///
    /// [`JournalError::Locked`] if another writer has it open, [`JournalError::Version`]
    /// for a newer format, [`JournalError::Corrupt`] for a damaged line (unless
    /// salvaging), [`JournalError::Io`] if the file cannot be read or written.
    ///
    /// ```
    /// use favur_context::{fuzzy, OpenOptions};
    /// let path = std::env::temp_dir().join(format!("favur-doc-open-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let mut h = OpenOptions::new().open(&path)?;
    /// let id = h.append(fuzzy!(user: "hello"))?;
    /// drop(h);
    /// let h = OpenOptions::new().open(&path)?;
    /// assert_eq!(h.recall(id).unwrap().message().text(), "hello");
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    pub fn open(&self, path: impl AsRef<Path>) -> Result<JournaledHistory, JournalError> {
        JournaledHistory::open_with(path.as_ref(), self)
    }

    /// Reads a journal from any reader into a [`History`] holding every original, without
    /// a lock and without changing anything: to inspect a journal (even one a writer has
    /// open) or a copy of one. A torn last line is left out and reported; with
    /// [`salvage`](OpenOptions::salvage), damage ends the read and is reported.
    ///
    /// ```
    /// use favur_context::OpenOptions;
    /// let text = "{\"journal\":{\"format\":1,\"framing_tokens\":4}}\n{\"entry\":{\"id\":0,\"retention\":\"fuzzy\",\"tokens\":1,\"site\":{\"file\":\"a.rs\",\"line\":1,\"column\":1},\"message\":{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"hi\"}]}}}\n";
    /// let (history, report) = OpenOptions::new().read(text.as_bytes())?;
    /// assert_eq!(history.len(), 1);
    /// assert_eq!(report.records, 1);
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    pub fn read(&self, reader: impl Read) -> Result<(History, OpenReport), JournalError> {
        let path = Path::new("(reader)");
        let scan = scan(BufReader::new(reader), path, self, false)?;
        let mut report = OpenReport {
            created: false,
            records: scan.records,
            torn_tail: scan.torn,
            salvaged: None,
        };
        if let Some(damage) = scan.damage {
            if !self.salvage {
                return Err(damage.into_error(path));
            }
            report.salvaged = Some(Salvaged {
                line: damage.line,
                offset: damage.offset,
                problem: damage.problem,
                moved_to: None,
                bytes: 0,
            });
        }
        Ok((scan.history, report))
    }

    fn new_history(&self) -> History {
        History::new()
            .with_shared_counter(Arc::clone(&self.counter))
            .with_framing_tokens(self.framing_tokens)
    }
}

impl History {
    /// Reads a journal (see [`JournaledHistory`]) into a history holding every original,
    /// with the default [`OpenOptions`]: shorthand for `OpenOptions::new().read(reader)`.
    ///
    /// ```
    /// use favur_context::{History, JournalError};
    /// let err = History::from_journal("{\"journal\":{\"format\":2,\"framing_tokens\":4}}\n".as_bytes()).unwrap_err();
    /// assert!(matches!(err, JournalError::Version { found: 2, .. }));
    /// ```
    pub fn from_journal(reader: impl Read) -> Result<(History, OpenReport), JournalError> {
        OpenOptions::new().read(reader)
    }
}

/// A [`History`] bound to a journal file: every append and compaction is written to the
/// file before it is acknowledged, and opening the file again gives back the same history
/// and view, ids included.
///
/// Read access goes through `Deref<Target = History>` (view, usage, entries in the view);
/// every change goes through this type's own fallible methods, so nothing bypasses the
/// journal. Only one writer may have a journal open: the file is locked.
///
/// Memory is bounded by the view: once an entry leaves the view (summarized or dropped),
/// its original lives only in the file ([`History::entry`] returns `None` for it) and
/// [`recall`](JournaledHistory::recall) reads it back.
///
/// ```
/// use favur_context::{fuzzy, strict, Compaction, Edit, JournaledHistory};
/// let path = std::env::temp_dir().join(format!("favur-doc-jh-{}.jsonl", std::process::id()));
/// # let _ = std::fs::remove_file(&path);
/// let mut history = JournaledHistory::open(&path)?;
/// history.pin(strict!(system: "You are a coding agent."))?;
/// let listing = history.append(fuzzy!(tool_result("c1"): "Cargo.toml\nsrc/"))?;
/// history.apply(Compaction { tier: 1, edits: vec![Edit::Drop { id: listing }], usage_after: None })?;
/// assert!(history.entry(listing).is_none()); // evicted from memory...
/// assert_eq!(history.recall(listing).unwrap().message().tool_results().next().unwrap().content, "Cargo.toml\nsrc/"); // ...read back
/// drop(history);
///
/// let reopened = JournaledHistory::open(&path)?;
/// assert_eq!(reopened.len(), 2);
/// assert!(reopened.view().is_empty());
/// # drop(reopened); std::fs::remove_file(&path).unwrap();
/// # Ok::<(), favur_context::JournalError>(())
/// ```
///
/// A second writer is refused:
///
/// ```
/// use favur_context::{JournalError, JournaledHistory};
/// let path = std::env::temp_dir().join(format!("favur-doc-lock-{}.jsonl", std::process::id()));
/// let first = JournaledHistory::open(&path)?;
/// let err = JournaledHistory::open(&path).unwrap_err();
/// assert!(matches!(err, JournalError::Locked { .. }));
/// # drop(first); std::fs::remove_file(&path).unwrap();
/// # Ok::<(), favur_context::JournalError>(())
/// ```
pub struct JournaledHistory {
    history: History,
    file: File,
    path: PathBuf,
    /// Length of the file: the end of the last record written.
    len: u64,
    durability: Durability,
    unsynced: u32,
    max_line_bytes: usize,
    keep_originals: bool,
    /// Where each id's record is, indexed by id (a summary's is its compaction's).
    locators: Vec<Locator>,
    buf: Vec<u8>,
    poisoned: bool,
    report: OpenReport,
}

impl fmt::Debug for JournaledHistory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JournaledHistory")
            .field("path", &self.path)
            .field("len", &self.len)
            .field("durability", &self.durability)
            .field("history", &self.history)
            .finish_non_exhaustive()
    }
}

impl Deref for JournaledHistory {
    type Target = History;

    fn deref(&self) -> &History {
        &self.history
    }
}

impl JournaledHistory {
    /// Opens (or creates) the journal at `path` with the default [`OpenOptions`].
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("favur-doc-o-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let h = favur_context::JournaledHistory::open(&path)?;
    /// assert!(h.is_empty());
    /// assert!(h.report().created);
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<JournaledHistory, JournalError> {
        JournaledHistory::open_with(path.as_ref(), &OpenOptions::new())
    }

    fn open_with(path: &Path, options: &OpenOptions) -> Result<JournaledHistory, JournalError> {
        let io = |action: &'static str| {
            move |source: io::Error| JournalError::Io {
                path: path.to_path_buf(),
                action,
                source,
            }
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(io("open"))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(JournalError::Locked {
                    path: path.to_path_buf(),
                });
            }
            Err(TryLockError::Error(source)) => return Err(io("lock")(source)),
        }
        let file_len = file.metadata().map_err(io("read the length of"))?.len();
        let scan = scan(
            BufReader::with_capacity(1 << 16, &file),
            path,
            options,
            !options.keep_originals,
        )?;
        let sync = options.durability != Durability::Flush;
        let mut report = OpenReport {
            created: false,
            records: scan.records,
            torn_tail: scan.torn.clone(),
            salvaged: None,
        };
        if let Some(damage) = scan.damage {
            if !options.salvage {
                return Err(damage.into_error(path));
            }
            let moved_to = move_aside(&file, path, damage.offset, sync)?;
            tracing::warn!(
                journal = %path.display(),
                line = damage.line,
                offset = damage.offset,
                moved_to = %moved_to.display(),
                "salvaged a damaged journal: {}", damage.problem
            );
            report.salvaged = Some(Salvaged {
                line: damage.line,
                offset: damage.offset,
                problem: damage.problem,
                moved_to: Some(moved_to),
                bytes: file_len.saturating_sub(damage.offset),
            });
        }
        if scan.end < file_len {
            if let Some(torn) = &scan.torn {
                tracing::warn!(
                    journal = %path.display(),
                    line = torn.line,
                    offset = torn.offset,
                    bytes = torn.bytes,
                    "cut off a torn last record (an append that was never acknowledged)"
                );
            }
            file.set_len(scan.end)
                .map_err(io("cut off the damaged end of"))?;
            if sync {
                file.sync_data().map_err(io("sync"))?;
            }
        }
        let mut journal = JournaledHistory {
            history: scan.history,
            file,
            path: path.to_path_buf(),
            len: scan.end,
            durability: options.durability,
            unsynced: 0,
            max_line_bytes: options.max_line_bytes,
            keep_originals: options.keep_originals,
            locators: scan.locators,
            buf: Vec::with_capacity(4096),
            poisoned: false,
            report,
        };
        if !scan.header {
            let header = Header {
                format: JOURNAL_FORMAT,
                framing_tokens: journal.history.framing_tokens(),
            };
            journal.write(&RecordOut::Journal(header))?;
            journal.report.created = true;
            if sync {
                sync_parent(path);
            }
        }
        Ok(journal)
    }

    /// What opening found: whether the journal was created, how many records were
    /// loaded, a torn last line cut off, damage salvaged.
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("favur-doc-rep-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let h = favur_context::JournaledHistory::open(&path)?;
    /// assert!(h.report().is_clean());
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    pub fn report(&self) -> &OpenReport {
        &self.report
    }

    /// The journal file.
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("favur-doc-path-{}.jsonl", std::process::id()));
    /// let h = favur_context::JournaledHistory::open(&path)?;
    /// assert_eq!(h.path(), path);
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The durability setting in force.
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("favur-doc-dur-{}.jsonl", std::process::id()));
    /// let h = favur_context::JournaledHistory::open(&path)?;
    /// assert_eq!(h.durability(), favur_context::Durability::Flush);
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// The history itself (also reachable through `Deref`).
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("favur-doc-hist-{}.jsonl", std::process::id()));
    /// let h = favur_context::JournaledHistory::open(&path)?;
    /// assert!(h.history().view().is_empty());
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    pub fn history(&self) -> &History {
        &self.history
    }

    /// Appends a classified value, writes it to the journal and returns its id once
    /// written (and synced, as [`Durability`] says). Only values that carry a retention
    /// class are accepted, as for [`History::append`].
    ///
    /// # Errors
    ///
    /// On any error nothing was recorded: the history is unchanged and the journal holds
    /// no part of the record.
    ///
    /// ```
    /// use favur_context::{fuzzy, JournaledHistory};
    /// let path = std::env::temp_dir().join(format!("favur-doc-app-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let mut h = JournaledHistory::open(&path)?;
    /// let id = h.append(fuzzy!(user: "look at src/"))?;
    /// assert_eq!(h.entry(id).unwrap().site().line(), line!() - 1);
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    ///
    /// ```compile_fail
    /// # let mut h = favur_context::JournaledHistory::open("x").unwrap();
    /// h.append("unclassified"); // error: `&str` has no retention class
    /// ```
    #[track_caller]
    pub fn append<M: Classify>(&mut self, message: M) -> Result<EntryId, JournalError> {
        let classified = message.into_classified(CallSite::caller());
        self.record(classified, EntryKind::Appended)
    }

    /// Pins a classified message (see [`History::pin`]), writing it to the journal.
    ///
    /// ```
    /// use favur_context::{strict, JournaledHistory};
    /// let path = std::env::temp_dir().join(format!("favur-doc-pin-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let mut h = JournaledHistory::open(&path)?;
    /// let id = h.pin(strict!(system: "Be careful."))?;
    /// assert_eq!(h.pinned(), &[id]);
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    #[track_caller]
    pub fn pin<M: Classify>(&mut self, message: M) -> Result<EntryId, JournalError> {
        let classified = message.into_classified(CallSite::caller());
        self.record(classified, EntryKind::Pinned)
    }

    /// Appends a tool's result with the tool's class (see [`History::append_tool_result`]).
    ///
    /// ```
    /// use favur_context::{retention, JournaledHistory, Retention, Tool};
    /// struct Ls;
    /// #[retention(forgettable)]
    /// impl Tool for Ls {
    ///     fn name(&self) -> &str { "ls" }
    ///     fn description(&self) -> &str { "List files" }
    ///     fn parameters(&self) -> serde_json::Value { serde_json::json!({}) }
    ///     fn call(&self, _: &serde_json::Value) -> Result<String, String> { Ok("a.rs".into()) }
    /// }
    /// let path = std::env::temp_dir().join(format!("favur-doc-tr-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let mut h = JournaledHistory::open(&path)?;
    /// let id = h.append_tool_result(&Ls, "c1", Ok("a.rs".into()))?;
    /// assert_eq!(h.entry(id).unwrap().retention(), Retention::Forgettable);
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    #[track_caller]
    pub fn append_tool_result<T: ClassifiedTool + ?Sized>(
        &mut self,
        _tool: &T,
        call_id: impl Into<String>,
        output: Result<String, String>,
    ) -> Result<EntryId, JournalError> {
        let classified = history::tool_result::<T>(call_id.into(), output, CallSite::caller());
        self.record(classified, EntryKind::Appended)
    }

    /// Runs `tool` for `call` and appends its result with the tool's class (see
    /// [`History::run_tool`]).
    ///
    /// ```
    /// use favur_context::{retention, JournaledHistory, Tool, ToolCall};
    /// struct Echo;
    /// #[retention(fuzzy)]
    /// impl Tool for Echo {
    ///     fn name(&self) -> &str { "echo" }
    ///     fn description(&self) -> &str { "Echo" }
    ///     fn parameters(&self) -> serde_json::Value { serde_json::json!({}) }
    ///     fn call(&self, a: &serde_json::Value) -> Result<String, String> { Ok(a.to_string()) }
    /// }
    /// let path = std::env::temp_dir().join(format!("favur-doc-run-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let mut h = JournaledHistory::open(&path)?;
    /// let id = h.run_tool(&Echo, &ToolCall::new("c1", "echo", r#"{"x":1}"#))?;
    /// assert_eq!(h.entry(id).unwrap().message().tool_results().next().unwrap().content, r#"{"x":1}"#);
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    #[track_caller]
    pub fn run_tool<T: ClassifiedTool + ?Sized>(
        &mut self,
        tool: &T,
        call: &ToolCall,
    ) -> Result<EntryId, JournalError> {
        let output = history::run(tool, call);
        let classified = history::tool_result::<T>(call.id.clone(), output, CallSite::caller());
        self.record(classified, EntryKind::Appended)
    }

    /// Applies a compaction (see [`History::apply`]) and writes it to the journal. Then
    /// the originals of entries that left the view are dropped from memory (unless
    /// [`OpenOptions::keep_originals`]); [`recall`](JournaledHistory::recall) reads them
    /// back.
    ///
    /// # Errors
    ///
    /// [`JournalError::Apply`] if it does not apply to the view, or a write error; either
    /// way nothing changed.
    ///
    /// ```
    /// use favur_context::{fuzzy, ApplyError, Compaction, Edit, EntryId, JournalError, JournaledHistory};
    /// let path = std::env::temp_dir().join(format!("favur-doc-apply-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let mut h = JournaledHistory::open(&path)?;
    /// let id = h.append(fuzzy!(user: "old"))?;
    /// let err = h.apply(Compaction { tier: 1, edits: vec![Edit::Drop { id: EntryId(7) }], usage_after: None }).unwrap_err();
    /// assert!(matches!(err, JournalError::Apply(ApplyError::NotInView { .. })));
    /// h.apply(Compaction { tier: 1, edits: vec![Edit::Drop { id }], usage_after: None })?;
    /// assert!(h.view().is_empty());
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    pub fn apply(&mut self, compaction: Compaction) -> Result<(), JournalError> {
        let derived = self.history.derive(&compaction)?;
        let at = self.write(&RecordOut::Compaction(&compaction))?;
        self.locators
            .extend(std::iter::repeat_n(at, derived.1.len()));
        if !self.keep_originals {
            self.history.evict_left_view(&compaction);
        }
        self.history.commit(compaction, derived);
        Ok(())
    }

    /// Runs `f` with mutable access to the history, then writes to the journal, in order,
    /// everything `f` added: the entries it recorded and the compactions it applied. This
    /// is how code written for a plain [`History`] works on a journaled one, e.g. the
    /// [`Compactor`](crate::Compactor), which compacts through [`History::apply`]. It
    /// returns `f`'s result once everything is written (and synced, as [`Durability`]
    /// says).
    ///
    /// # Errors
    ///
    /// `f` may only add to the history. If it shrinks or replaces it
    /// ([`JournalError::Diverged`]), or a write fails, the history in memory is ahead of
    /// the file: the journal takes no more writes, and reopening it gives back the state
    /// before the call, everything acknowledged included.
    ///
    /// ```
    /// use favur_context::{forgettable, fuzzy, Compactor, JournaledHistory, Policy};
    /// let path = std::env::temp_dir().join(format!("favur-doc-with-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let mut history = JournaledHistory::open(&path)?;
    /// let listing = history.append(forgettable!(tool_result("c1"): "{}", "a.rs\nb.rs\n".repeat(20)))?;
    /// history.append(fuzzy!(assistant: "ok"))?;
    /// let mut compactor = Compactor::new(Policy::default());
    /// let report = history.record_with(|h| compactor.compact_at(h, 2))?;
    /// assert!(report.is_some());
    /// assert!(history.entry(listing).is_none()); // dropped, evicted...
    /// assert!(history.recall(listing).is_ok()); // ...and still recallable
    /// drop(history);
    /// assert_eq!(JournaledHistory::open(&path)?.compactions().len(), 1);
    /// # std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    pub fn record_with<R>(&mut self, f: impl FnOnce(&mut History) -> R) -> Result<R, JournalError> {
        if self.poisoned {
            return Err(JournalError::Poisoned {
                path: self.path.clone(),
            });
        }
        let next = self.history.next_id();
        let compactions = self.history.compactions().len();
        let framing = self.history.framing_tokens();
        let counter = Arc::clone(self.history.shared_counter());
        let out = f(&mut self.history);
        let what = if !Arc::ptr_eq(&counter, self.history.shared_counter()) {
            Some("replaced by another history (or given another token counter)")
        } else if self.history.next_id() < next {
            Some("shrunk (fewer ids)")
        } else if self.history.compactions().len() < compactions {
            Some("shrunk (fewer compactions)")
        } else if self.history.framing_tokens() != framing {
            Some("given other framing tokens")
        } else {
            None
        };
        if let Some(what) = what {
            self.poisoned = true;
            return Err(JournalError::Diverged {
                path: self.path.clone(),
                what,
            });
        }
        if let Err(e) = self.catch_up(next, compactions) {
            self.poisoned = true;
            return Err(e);
        }
        Ok(out)
    }

    /// Writes the entries from id `from` on and the compactions from index `compactions`
    /// on, in the order a replay needs: each compaction as soon as it is ready (see
    /// `history::ready`), the entries in id order, summaries inside their compactions.
    fn catch_up(&mut self, from: EntryId, compactions: usize) -> Result<(), JournalError> {
        let added: Vec<Compaction> = self.history.compactions()[compactions..].to_vec();
        let end = self.history.next_id();
        let mut pending = added.iter().peekable();
        let mut id = from;
        let diverged = |path: &Path| JournalError::Diverged {
            path: path.to_path_buf(),
            what: "replaced (its records do not follow from what was there)",
        };
        loop {
            while let Some(c) = pending.next_if(|c| history::ready(c, id)) {
                let at = self.write(&RecordOut::Compaction(c))?;
                let summaries = c
                    .edits
                    .iter()
                    .filter(|e| matches!(e, Edit::Summarize { .. }))
                    .count();
                self.locators.extend(std::iter::repeat_n(at, summaries));
                id = EntryId(id.0 + summaries as u64);
                if !self.keep_originals {
                    self.history.evict_left_view(c);
                }
            }
            if id >= end {
                break;
            }
            let entry = match self.history.entry(id) {
                Some(e) if !e.kind.is_summary() => e.clone(),
                _ => return Err(diverged(&self.path)),
            };
            let at = self.write(&RecordOut::Entry(&entry))?;
            self.locators.push(at);
            id = EntryId(id.0 + 1);
        }
        if pending.next().is_some() || id != end {
            return Err(diverged(&self.path));
        }
        Ok(())
    }

    /// The original of any entry, whether it is in the view, summarized or dropped:
    /// borrowed when it is held in memory, read back from the journal otherwise.
    ///
    /// # Errors
    ///
    /// [`RecallError::UnknownId`] for an id never assigned; [`RecallError::Io`] or
    /// [`RecallError::Corrupt`] if the journal cannot be read back.
    ///
    /// ```
    /// use favur_context::{strict, Compaction, Edit, EntryId, EntryKind, Entry, JournaledHistory, Message, Retention, CallSite};
    /// let path = std::env::temp_dir().join(format!("favur-doc-recall-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let mut h = JournaledHistory::open(&path)?;
    /// let trace = h.append(strict!(tool_result("c1"): "Traceback: ..."))?;
    /// let summary = Entry::new(h.next_id(), Retention::Fuzzy, 4, CallSite::new("compactor", 1, 1),
    ///     EntryKind::Summary { replaces: vec![trace] }, Message::assistant("a traceback"));
    /// h.apply(Compaction { tier: 3, edits: vec![Edit::Summarize { summary }], usage_after: None })?;
    /// assert_eq!(h.recall(trace).unwrap().message().tool_results().next().unwrap().content, "Traceback: ...");
    /// assert!(h.recall(EntryId(99)).is_err());
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    pub fn recall(&self, id: EntryId) -> Result<Cow<'_, Entry>, RecallError> {
        if let Some(entry) = self.history.entry(id) {
            return Ok(Cow::Borrowed(entry));
        }
        self.read_back(id).map(Cow::Owned)
    }

    fn read_back(&self, id: EntryId) -> Result<Entry, RecallError> {
        let at = usize::try_from(id.0)
            .ok()
            .and_then(|i| self.locators.get(i))
            .ok_or(RecallError::UnknownId {
                id,
                next: self.history.next_id(),
            })?;
        let mut line = vec![0u8; at.len as usize];
        read_exact_at(&self.file, &mut line, at.offset).map_err(|source| RecallError::Io {
            path: self.path.clone(),
            id,
            offset: at.offset,
            source,
        })?;
        let corrupt = |problem: String| RecallError::Corrupt {
            path: self.path.clone(),
            id,
            offset: at.offset,
            problem,
        };
        let content = line
            .strip_suffix(b"\n")
            .ok_or_else(|| corrupt("the line does not end where it did".into()))?;
        let record: RecordIn =
            serde_json::from_slice(content).map_err(|e| corrupt(e.to_string()))?;
        let found = match record {
            RecordIn::Entry(e) => (e.id == id).then_some(e),
            RecordIn::Compaction(c) => c.edits.into_iter().find_map(|edit| match edit {
                Edit::Summarize { summary } if summary.id == id => Some(summary),
                _ => None,
            }),
            RecordIn::Journal(_) => None,
        };
        found.ok_or_else(|| corrupt("the record there is another entry's".into()))
    }

    /// A complete copy of the history with every original in memory (evicted ones read
    /// back from the journal), e.g. to export it with [`History::to_json`].
    ///
    /// ```
    /// use favur_context::{fuzzy, Compaction, Edit, History, JournaledHistory};
    /// let path = std::env::temp_dir().join(format!("favur-doc-full-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let mut h = JournaledHistory::open(&path)?;
    /// let id = h.append(fuzzy!(user: "old"))?;
    /// h.apply(Compaction { tier: 1, edits: vec![Edit::Drop { id }], usage_after: None })?;
    /// let full = h.to_history().unwrap();
    /// assert_eq!(full.entries().len(), 1);
    /// assert_eq!(History::from_json(&full.to_json()).unwrap().view(), h.view());
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    pub fn to_history(&self) -> Result<History, RecallError> {
        let mut full = self.history.clone();
        full.fill_evicted(|id| self.read_back(id))?;
        Ok(full)
    }

    /// Syncs the journal to disk now, whatever the [`Durability`].
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("favur-doc-sync-{}.jsonl", std::process::id()));
    /// let mut h = favur_context::JournaledHistory::open(&path)?;
    /// h.sync()?;
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    pub fn sync(&mut self) -> Result<(), JournalError> {
        self.file.sync_data().map_err(|source| {
            self.poisoned = true;
            JournalError::Io {
                path: self.path.clone(),
                action: "sync",
                source,
            }
        })?;
        self.unsynced = 0;
        Ok(())
    }

    fn record(&mut self, classified: Classified, kind: EntryKind) -> Result<EntryId, JournalError> {
        let entry = self.history.make_entry(classified, kind);
        let at = self.write(&RecordOut::Entry(&entry))?;
        self.locators.push(at);
        let id = entry.id;
        self.history.restore(entry);
        Ok(id)
    }

    /// Writes one record as one line. On failure the file is cut back to where it was (or,
    /// if that fails too, the journal is poisoned) and nothing is acknowledged.
    fn write(&mut self, record: &RecordOut<'_>) -> Result<Locator, JournalError> {
        if self.poisoned {
            return Err(JournalError::Poisoned {
                path: self.path.clone(),
            });
        }
        self.buf.clear();
        if let Err(e) = serde_json::to_writer(&mut self.buf, record) {
            // Plain data with string keys: only an I/O error of the Vec could get here.
            return Err(JournalError::Io {
                path: self.path.clone(),
                action: "encode a record for",
                source: io::Error::other(e),
            });
        }
        if self.buf.len() > self.max_line_bytes {
            return Err(JournalError::RecordTooLong {
                path: self.path.clone(),
                len: self.buf.len(),
                limit: self.max_line_bytes,
            });
        }
        self.buf.push(b'\n');
        let at = Locator {
            offset: self.len,
            len: self.buf.len() as u32,
        };
        if let Err(source) = (&self.file).write_all(&self.buf) {
            self.roll_back(at.offset);
            return Err(JournalError::Io {
                path: self.path.clone(),
                action: "append to",
                source,
            });
        }
        self.len += self.buf.len() as u64;
        let sync_now = match self.durability {
            Durability::Flush => false,
            Durability::SyncEach => true,
            Durability::SyncEvery(n) => {
                self.unsynced += 1;
                self.unsynced >= n.max(1)
            }
        };
        if sync_now {
            if let Err(source) = self.file.sync_data() {
                // The record may or may not reach the disk: take it back and stop writing.
                self.roll_back(at.offset);
                self.poisoned = true;
                return Err(JournalError::Io {
                    path: self.path.clone(),
                    action: "sync",
                    source,
                });
            }
            self.unsynced = 0;
        }
        Ok(at)
    }

    fn roll_back(&mut self, len: u64) {
        if self.file.set_len(len).is_ok() {
            self.len = len;
        } else {
            self.poisoned = true;
        }
    }
}

impl Drop for JournaledHistory {
    fn drop(&mut self) {
        if self.unsynced > 0 {
            // Best effort: `sync` reports errors; a drop cannot.
            let _ = self.file.sync_data();
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Header {
    format: u32,
    framing_tokens: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum RecordOut<'a> {
    Journal(Header),
    Entry(&'a Entry),
    Compaction(&'a Compaction),
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum RecordIn {
    Journal(#[allow(dead_code)] Value),
    Entry(Entry),
    Compaction(Compaction),
}

/// A damaged line found while reading.
struct Damage {
    line: u64,
    offset: u64,
    problem: Corruption,
}

impl Damage {
    fn into_error(self, path: &Path) -> JournalError {
        JournalError::Corrupt {
            path: path.to_path_buf(),
            line: self.line,
            offset: self.offset,
            problem: self.problem,
        }
    }
}

/// What reading a journal gave.
struct Scan {
    history: History,
    locators: Vec<Locator>,
    /// End of the last good record.
    end: u64,
    header: bool,
    records: u64,
    torn: Option<TornTail>,
    damage: Option<Damage>,
}

/// Reads a journal, replaying every record into a history, until the end, a torn last
/// line or the first damaged line.
fn scan<R: BufRead>(
    mut reader: R,
    path: &Path,
    options: &OpenOptions,
    evict: bool,
) -> Result<Scan, JournalError> {
    let mut scan = Scan {
        history: options.new_history(),
        locators: Vec::new(),
        end: 0,
        header: false,
        records: 0,
        torn: None,
        damage: None,
    };
    let limit = options.max_line_bytes as u64 + 1; // the content and its `\n`
    let mut buf = Vec::with_capacity(4096);
    let mut line = 0u64;
    loop {
        buf.clear();
        let n = reader
            .by_ref()
            .take(limit)
            .read_until(b'\n', &mut buf)
            .map_err(|source| JournalError::Io {
                path: path.to_path_buf(),
                action: "read",
                source,
            })?;
        if n == 0 {
            break;
        }
        line += 1;
        let offset = scan.end;
        let Some(content) = buf.strip_suffix(b"\n") else {
            if n as u64 == limit {
                scan.damage = Some(Damage {
                    line,
                    offset,
                    problem: Corruption::LineTooLong {
                        limit: options.max_line_bytes,
                    },
                });
            } else {
                scan.torn = Some(TornTail {
                    line,
                    offset,
                    bytes: n as u64,
                });
            }
            break;
        };
        let at = Locator {
            offset,
            len: n as u32,
        };
        let result = if scan.header {
            replay(&mut scan, content, at, evict)
        } else {
            header(content).map(|framing| {
                scan.history = std::mem::take(&mut scan.history).with_framing_tokens(framing);
                scan.header = true;
            })
        };
        match result {
            Ok(()) => {}
            Err(LineError::Version(found)) => {
                return Err(JournalError::Version {
                    path: path.to_path_buf(),
                    found,
                });
            }
            Err(LineError::Corrupt(problem)) => {
                scan.damage = Some(Damage {
                    line,
                    offset,
                    problem,
                });
                break;
            }
        }
        scan.end += n as u64;
    }
    Ok(scan)
}

enum LineError {
    Version(u64),
    Corrupt(Corruption),
}

impl From<Corruption> for LineError {
    fn from(c: Corruption) -> Self {
        LineError::Corrupt(c)
    }
}

/// Parses the header line and returns the framing tokens it declares.
fn header(content: &[u8]) -> Result<u32, LineError> {
    let value: Value = serde_json::from_slice(content).map_err(|e| syntax(content, &e))?;
    let Some(inner) = value.as_object().and_then(|o| o.get("journal")) else {
        return Err(Corruption::MissingHeader.into());
    };
    let Some(format) = inner.get("format").and_then(Value::as_u64) else {
        return Err(Corruption::InvalidHeader {
            message: "no integer `format`".into(),
        }
        .into());
    };
    if format != u64::from(JOURNAL_FORMAT) {
        return Err(LineError::Version(format));
    }
    let header: Header = Header::deserialize(inner).map_err(|e| Corruption::InvalidHeader {
        message: e.to_string(),
    })?;
    Ok(header.framing_tokens)
}

/// Replays one record line into the history.
fn replay(scan: &mut Scan, content: &[u8], at: Locator, evict: bool) -> Result<(), LineError> {
    let record: RecordIn = match serde_json::from_slice(content) {
        Ok(r) => r,
        Err(e) => return Err(diagnose(content, &e).into()),
    };
    let history = &mut scan.history;
    match record {
        RecordIn::Journal(_) => return Err(Corruption::UnexpectedHeader.into()),
        RecordIn::Entry(entry) => {
            if entry.id != history.next_id() {
                return Err(Corruption::IdOrder {
                    expected: history.next_id(),
                    found: entry.id,
                }
                .into());
            }
            if entry.kind.is_summary() {
                return Err(Corruption::UnexpectedSummary { id: entry.id }.into());
            }
            history.restore(entry);
            scan.locators.push(at);
        }
        RecordIn::Compaction(compaction) => {
            let derived = history
                .derive(&compaction)
                .map_err(Corruption::Compaction)?;
            scan.locators
                .extend(std::iter::repeat_n(at, derived.1.len()));
            if evict {
                history.evict_left_view(&compaction);
            }
            history.commit(compaction, derived);
        }
    }
    scan.records += 1;
    Ok(())
}

/// Says what is wrong with a line that did not parse as a record.
fn diagnose(content: &[u8], error: &serde_json::Error) -> Corruption {
    let value: Value = match serde_json::from_slice(content) {
        Ok(v) => v,
        Err(e) => return syntax(content, &e),
    };
    let Some(object) = value.as_object() else {
        return Corruption::NotARecord;
    };
    let mut keys = object.iter();
    let (Some((kind, inner)), None) = (keys.next(), keys.next()) else {
        return Corruption::NotARecord;
    };
    match kind.as_str() {
        "entry" => {
            let id = inner.get("id").and_then(Value::as_u64).map(EntryId);
            match inner.get("retention") {
                None => Corruption::MissingClass { id },
                Some(r) if Retention::deserialize(r).is_err() => Corruption::UnknownClass {
                    id,
                    found: r.to_string(),
                },
                Some(_) => Corruption::InvalidEntry {
                    id,
                    message: Entry::deserialize(inner)
                        .err()
                        .map(|e| e.to_string())
                        .unwrap_or_else(|| error.to_string()),
                },
            }
        }
        "compaction" => Corruption::InvalidCompaction {
            message: Compaction::deserialize(inner)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_else(|| error.to_string()),
        },
        "journal" => Corruption::UnexpectedHeader,
        other => Corruption::UnknownRecord {
            kind: other.to_owned(),
        },
    }
}

/// Invalid UTF-8 or invalid JSON.
fn syntax(content: &[u8], error: &serde_json::Error) -> Corruption {
    match std::str::from_utf8(content) {
        Err(e) => Corruption::InvalidUtf8 {
            valid_up_to: e.valid_up_to(),
        },
        Ok(_) => Corruption::InvalidJson {
            message: error.to_string(),
        },
    }
}

/// Copies the journal from `offset` to the end into a new file next to it and returns
/// that file's path.
fn move_aside(file: &File, path: &Path, offset: u64, sync: bool) -> Result<PathBuf, JournalError> {
    let io = |action: &'static str, p: &Path| {
        let p = p.to_path_buf();
        move |source: io::Error| JournalError::Io {
            path: p,
            action,
            source,
        }
    };
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".damaged-{offset}"));
    let base = PathBuf::from(name);
    let mut target = base.clone();
    let mut n = 0u32;
    let mut out = loop {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
        {
            Ok(f) => break f,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1000 => {
                n += 1;
                let mut name = base.as_os_str().to_owned();
                name.push(format!(".{n}"));
                target = PathBuf::from(name);
            }
            Err(e) => return Err(io("create the salvage file for", path)(e)),
        }
    };
    let mut reader = file;
    reader
        .seek(SeekFrom::Start(offset))
        .map_err(io("read the damaged end of", path))?;
    io::copy(&mut reader, &mut out).map_err(io("copy the damaged end of", path))?;
    if sync {
        out.sync_all()
            .map_err(io("sync the salvage file of", path))?;
    }
    Ok(target)
}

/// Makes a new file's directory entry durable (best effort).
fn sync_parent(path: &Path) {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(not(any(unix, windows)))]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    // Appends go to the end whatever the cursor; recalls from several threads at once
    // may race on it and report a corrupt record, never return a wrong one.
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(line: &str) -> Corruption {
        let bytes = line.as_bytes();
        let err = serde_json::from_slice::<RecordIn>(bytes)
            .err()
            .expect("a bad record");
        diagnose(bytes, &err)
    }

    #[test]
    fn journaled_history_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<JournaledHistory>();
        check::<JournalError>();
        check::<RecallError>();
    }

    #[test]
    fn diagnose_names_each_kind_of_bad_record() {
        assert!(matches!(problem("{"), Corruption::InvalidJson { .. }));
        assert_eq!(problem("42"), Corruption::NotARecord);
        assert_eq!(problem(r#"{"a":1,"b":2}"#), Corruption::NotARecord);
        assert_eq!(
            problem(r#"{"blob":{}}"#),
            Corruption::UnknownRecord {
                kind: "blob".into()
            }
        );
        assert_eq!(
            problem(r#"{"entry":{"id":4}}"#),
            Corruption::MissingClass {
                id: Some(EntryId(4))
            }
        );
        assert_eq!(
            problem(r#"{"entry":{"retention":7}}"#),
            Corruption::UnknownClass {
                id: None,
                found: "7".into()
            }
        );
        assert!(matches!(
            problem(r#"{"entry":{"id":1,"retention":"strict"}}"#),
            Corruption::InvalidEntry { id: Some(EntryId(1)), message } if message.contains("missing field")
        ));
        assert!(matches!(
            problem(r#"{"compaction":{"tier":"x","edits":[]}}"#),
            Corruption::InvalidCompaction { .. }
        ));
    }

    #[test]
    fn invalid_utf8_is_told_apart_from_invalid_json() {
        let bytes = b"{\"entry\":\"a\xc3\x28\"}";
        let err = serde_json::from_slice::<RecordIn>(bytes).err().unwrap();
        assert_eq!(
            diagnose(bytes, &err),
            Corruption::InvalidUtf8 { valid_up_to: 11 }
        );
    }

    #[test]
    fn header_versions() {
        assert!(matches!(
            header(br#"{"journal":{"format":1,"framing_tokens":2}}"#),
            Ok(2)
        ));
        assert!(matches!(
            header(br#"{"journal":{"format":18446744073709551615}}"#),
            Err(LineError::Version(u64::MAX))
        ));
        assert!(matches!(
            header(br#"{"journal":{"format":0,"framing_tokens":2}}"#),
            Err(LineError::Version(0))
        ));
        assert!(matches!(
            header(br#"{"entry":{}}"#),
            Err(LineError::Corrupt(Corruption::MissingHeader))
        ));
        assert!(matches!(
            header(br#"{"journal":{"format":"1"}}"#),
            Err(LineError::Corrupt(Corruption::InvalidHeader { .. }))
        ));
    }

    #[test]
    fn records_written_are_records_read() {
        let entry = Entry::new(
            EntryId(0),
            Retention::Strict,
            3,
            CallSite::new("a.rs", 1, 2),
            EntryKind::Pinned,
            crate::Message::system("sys"),
        );
        let line = serde_json::to_vec(&RecordOut::Entry(&entry)).unwrap();
        match serde_json::from_slice::<RecordIn>(&line).unwrap() {
            RecordIn::Entry(e) => assert_eq!(e, entry),
            _ => panic!("not an entry"),
        }
        let header = serde_json::to_string(&RecordOut::Journal(Header {
            format: JOURNAL_FORMAT,
            framing_tokens: 4,
        }))
        .unwrap();
        assert_eq!(header, r#"{"journal":{"format":1,"framing_tokens":4}}"#);
    }

    #[test]
    fn a_zero_line_limit_refuses_every_line() {
        let err = OpenOptions::new()
            .max_line_bytes(0)
            .read(&b"{\"journal\":{\"format\":1,\"framing_tokens\":4}}\n"[..])
            .unwrap_err();
        assert!(matches!(
            err,
            JournalError::Corrupt {
                line: 1,
                offset: 0,
                problem: Corruption::LineTooLong { limit: 0 },
                ..
            }
        ));
    }
}
