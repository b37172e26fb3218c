//! Durable history: an append-only JSON-lines journal behind a [`History`].
//!
//! A [`JournaledHistory`] is a [`Store`]: it writes every entry it records and every
//! compaction record it applies to a journal file before acknowledging it, and opening the
//! file again rebuilds exactly the same history and view, ids included. Memory stays
//! bounded by the view: the originals of entries that left the view live only in the file,
//! and [`History::recall`] reads them back.
//!
//! # Format (version 1)
//!
//! UTF-8 text, one JSON object per line, each line ending in `\n`. Each object has exactly
//! one key, the record type:
//!
//! | line | record | meaning |
//! |---|---|---|
//! | first | `{"journal":{"format":1,"framing_tokens":4}}` | header: format version and the history's framing tokens |
//! | then | `{"entry":{"id":0,"retention":"strict","tokens":5,"site":{...},"kind":"pinned","message":{...}}}` | an entry appended or pinned (`kind` is absent for an appended entry), exactly as [`Entry`](crate::Entry) serializes |
//! | then | `{"batch":[{...entry...},{...entry...}]}` | several entries recorded all or none ([`Store::record`]), each as in an `entry` record |
//! | then | `{"keyed":{"key":"resp_1","entries":[{...entry...}]}}` | one or more entries recorded all or none under an idempotency key ([`Store::record_once`]); a key appears once per journal |
//! | then | `{"compaction":{"tier":2,"edits":[...]}}` | a [`Compaction`] applied, exactly as it serializes; its summaries carry their ids |
//!
//! Entry records carry ids 0, 1, 2, ... in order, except the ids taken by the summaries
//! of a compaction record, which are the next ids when that record is applied. Records
//! are replayed in file order with [`History`]'s own checks ([`History::insert`],
//! [`History::check`]), so a journal that opens is one that a history could have written.
//! Each record is one line written in one write, so a record is in the file whole or not
//! at all (a torn line is cut off on open): a batch or a compaction is never half there.
//!
//! # Faults
//!
//! - A last line without its `\n` is a torn write (the process died mid-append; that
//!   append was never acknowledged). Opening cuts it off and says so in the
//!   [`OpenReport`]. A last line that is a complete record and only lacks its `\n` is
//!   kept, and its `\n` written.
//! - A file that does not start with a journal header is not a journal: opening it is an
//!   error ([`JournalError::Corrupt`] with [`Corruption::MissingHeader`], or
//!   [`JournalError::NotAJournal`] when salvaging) and the file is left byte for byte as
//!   it was.
//! - The path is opened as a regular file only ([`JournalError::NotAFile`]) and not
//!   through a symbolic link unless [`OpenOptions::follow_symlinks`]
//!   ([`JournalError::Symlink`]).
//! - Every append checks, before it is acknowledged, that the file is still linked
//!   (deleted, or replaced by a rename over the path, it is not) and has the length the
//!   journal wrote: one `fstat`, and a `stat` of the path when the file has other hard
//!   links. A journal deleted, replaced or truncated under it refuses the append and every
//!   later one with [`JournalError::Changed`].
//! - Any other bad line is an error, [`JournalError::Corrupt`], naming the line number and
//!   byte offset and saying what is wrong ([`Corruption`]). Nothing is skipped silently.
//!   [`OpenOptions::salvage`] loads everything before it instead and moves the damaged
//!   rest aside to a file next to the journal.
//! - A header declaring a newer format is [`JournalError::Version`].
//! - Lines are bounded ([`OpenOptions::max_line_bytes`]); a longer one is
//!   [`Corruption::LineTooLong`], and a record that would be longer is refused on write.
//! - A failed write is cut back; if that fails too, or a panic interrupted a write, the
//!   journal is [`JournalError::Poisoned`]: it takes no more writes, and reopening gives
//!   back everything acknowledged.

mod error;
mod export;
mod format;
mod fs;
mod open;
mod options;
mod read;
mod readback;
mod scan;
mod sealed;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use sealed::is_sealed;
pub(crate) use sealed::record_in_line;
mod writer;

use std::fmt;
use std::path::Path;
use std::sync::Arc;

pub use error::{Corruption, JournalError};
pub use export::export_journal;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use export::write_journal;
#[cfg(feature = "fault-injection")]
#[doc(hidden)]
pub use fs::Faults;
pub use options::{
    DEFAULT_MAX_LINE_BYTES, Durability, JOURNAL_FORMAT, OpenOptions, OpenReport, Salvaged, TornTail,
};

use crate::history::view::Compaction;
use crate::history::{Change, NewEntry};
use crate::history::{CheckedCompaction, History};
use crate::model::entry::EntryId;
use crate::store_trait::Store;
pub(crate) use format::{Header, RecordOut, RequestOverhead};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use readback::find_entry;
use readback::{FileOriginals, Locator};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use scan::{apply_record, parse_record};
use writer::Writer;

/// A [`History`] bound to a journal file: a [`Store`] whose every append and compaction is
/// written to the file before it is acknowledged; opening the file again gives back the
/// same history and view, ids included.
///
/// Writes go through [`Store`] (`append`, `pin`, `run_tool`, `record`, `apply`), the same
/// calls as on any store; reads go through [`history`](JournaledHistory::history). Only
/// one writer may have a journal open: the file is locked.
///
/// Memory is bounded by the view: once an entry leaves the view (summarized or dropped),
/// its original lives only in the file, and [`History::recall`] reads it back (so a
/// helper given `journal.history()` sees every original).
///
/// ```
/// use favur_context::compact::{Compaction, Edit};
/// use favur_context::journal::JournaledHistory;
/// use favur_context::{fuzzy, strict, Store};
/// let path = std::env::temp_dir().join(format!("favur-doc-jh-{}.jsonl", std::process::id()));
/// # let _ = std::fs::remove_file(&path);
/// let mut history = JournaledHistory::open(&path)?;
/// history.pin(strict!(system: "You are a coding agent."))?;
/// let listing = history.append(fuzzy!(tool_result("c1"): "Cargo.toml\nsrc/"))?;
/// history.apply(Compaction { tier: std::num::NonZeroU8::MIN, edits: vec![Edit::Drop { id: listing }], usage_after: None })?;
/// assert_eq!(history.history().entries().len(), 1); // evicted from memory...
/// let back = history.history().recall(listing).unwrap(); // ...read back
/// assert_eq!(back.message().tool_results().next().unwrap().content, "Cargo.toml\nsrc/");
/// drop(history);
///
/// let reopened = JournaledHistory::open(&path)?;
/// assert_eq!(reopened.history().len(), 2);
/// assert!(reopened.history().view().is_empty());
/// # drop(reopened); std::fs::remove_file(&path).unwrap();
/// # Ok::<(), favur_context::journal::JournalError>(())
/// ```
///
/// A second writer is refused:
///
/// ```
/// use favur_context::journal::{JournalError, JournaledHistory};
/// let path = std::env::temp_dir().join(format!("favur-doc-lock-{}.jsonl", std::process::id()));
/// let first = JournaledHistory::open(&path)?;
/// let err = JournaledHistory::open(&path).unwrap_err();
/// assert!(matches!(err, JournalError::Locked { .. }));
/// # drop(first); std::fs::remove_file(&path).unwrap();
/// # Ok::<(), favur_context::journal::JournalError>(())
/// ```
pub struct JournaledHistory {
    history: History,
    writer: Writer,
    /// The history's originals reader, unless every original is kept in memory.
    originals: Option<Arc<FileOriginals>>,
    report: OpenReport,
}

impl fmt::Debug for JournaledHistory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JournaledHistory")
            .field("path", &self.writer.path)
            .field("len", &self.writer.len)
            .field("durability", &self.writer.durability)
            .field("poisoned", &self.writer.is_poisoned())
            .field("history", &self.history)
            .finish_non_exhaustive()
    }
}

impl JournaledHistory {
    /// Opens (or creates) the journal at `path` with the default [`OpenOptions`].
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("favur-doc-o-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let h = favur_context::journal::JournaledHistory::open(&path)?;
    /// assert!(h.history().is_empty());
    /// assert!(h.report().created);
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::journal::JournalError>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<JournaledHistory, JournalError> {
        OpenOptions::new().open(path)
    }

    /// Opens the journal at `path`, or creates it with the entries `setup` returns, with
    /// the default [`OpenOptions`]: see [`OpenOptions::open_or_create`].
    ///
    /// ```
    /// use favur_context::store::NewEntry;
    /// use favur_context::journal::JournaledHistory;
    /// use favur_context::strict;
    /// let path = std::env::temp_dir().join(format!("favur-doc-jooc-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// for _run in 0..3 {
    ///     let h = JournaledHistory::open_or_create(&path, || vec![NewEntry::pinned(strict!(system: "Be careful."))])?;
    ///     assert_eq!(h.history().pinned().len(), 1);
    /// }
    /// # std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::journal::JournalError>(())
    /// ```
    pub fn open_or_create(
        path: impl AsRef<Path>,
        setup: impl FnOnce() -> Vec<NewEntry>,
    ) -> Result<JournaledHistory, JournalError> {
        OpenOptions::new().open_or_create(path, setup)
    }

    /// The history as recorded: view, pinned entries, usage, compactions,
    /// [`recall`](History::recall) of any original (evicted ones read back from the file),
    /// [`pending_calls`](History::pending_calls), and what rendering takes.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// Sets the tokens every request carries beyond its messages (the tool definitions):
    /// see [`History::set_request_overhead_tokens`]. Journaled as a `request_overhead`
    /// record (one line, taking no id), so a reopened journal budgets the same; a value
    /// equal to the current one writes nothing.
    ///
    /// # Errors
    ///
    /// As for [`Store::record`]; then the overhead is unchanged.
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("favur-doc-ovh-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let mut h = favur_context::journal::JournaledHistory::open(&path)?;
    /// h.set_request_overhead_tokens(300)?;
    /// assert_eq!(h.history().usage_tokens(), 300);
    /// drop(h);
    /// let again = favur_context::journal::JournaledHistory::open(&path)?;
    /// assert_eq!(again.history().request_overhead_tokens(), 300);
    /// # drop(again); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::journal::JournalError>(())
    /// ```
    pub fn set_request_overhead_tokens(&mut self, tokens: u64) -> Result<(), JournalError> {
        self.writer.usable()?;
        if self.history.request_overhead_tokens() == tokens {
            return Ok(());
        }
        let record = RecordOut::RequestOverhead(RequestOverhead { tokens });
        let at = self.writer.write(&record)?;
        self.settle(at, 0, Change::Overhead(tokens))
    }

    /// What opening found: whether the journal is new, how many records were loaded, a
    /// torn last line cut off, damage salvaged.
    pub fn report(&self) -> &OpenReport {
        &self.report
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.writer.path
    }

    /// The durability setting in force.
    pub fn durability(&self) -> Durability {
        self.writer.durability
    }

    /// Whether the journal takes no more writes ([`JournalError::Poisoned`]): a failed
    /// write could not be cut back, a sync failed, or a panic interrupted a write.
    pub fn is_poisoned(&self) -> bool {
        self.writer.is_poisoned()
    }

    /// Syncs the journal to disk now, whatever the [`Durability`].
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("favur-doc-sync-{}.jsonl", std::process::id()));
    /// let mut h = favur_context::journal::JournaledHistory::open(&path)?;
    /// h.sync()?;
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::journal::JournalError>(())
    /// ```
    pub fn sync(&mut self) -> Result<(), JournalError> {
        self.writer.sync()
    }

    /// The newest line of a sealed journal (its sequence number and MAC), `None` for an
    /// unsealed one: see [`OpenOptions::seal_key`]. Keep it outside the journal to detect,
    /// on the next open, that its newest lines were cut off.
    ///
    /// ```
    /// use favur_context::journal::OpenOptions;
    /// use favur_context::store::SealKey;
    /// use favur_context::{fuzzy, Store};
    /// # let dir = tempfile::tempdir().unwrap();
    /// let options = OpenOptions::new().seal_key(SealKey::new([9u8; 32]).unwrap());
    /// let mut h = options.open(dir.path().join("j.jsonl"))?;
    /// assert_eq!(h.seal_head().unwrap().seq, 0); // the header
    /// h.append(fuzzy!(user: "hi"))?;
    /// let head = h.seal_head().unwrap();
    /// assert_eq!(head.seq, 1);
    /// drop(h);
    /// let again = options.open(dir.path().join("j.jsonl"))?;
    /// assert_eq!(again.report().seal_head, Some(head));
    /// # Ok::<(), favur_context::journal::JournalError>(())
    /// ```
    pub fn seal_head(&self) -> Option<crate::store_trait::seal::SealHead> {
        self.writer.seal.as_ref().and_then(|s| s.head())
    }

    /// Records in memory a change whose line (at `at`, taking `ids` ids) is written.
    fn settle(&mut self, at: Locator, ids: usize, change: Change) -> Result<(), JournalError> {
        if let Some(o) = &self.originals {
            o.push(at, ids);
        }
        if let Err(e) = self.history.settle(change) {
            // Drafted or checked against this very history: cannot happen. If it did,
            // memory is behind the file: stop writing.
            self.writer.poison();
            return Err(self.record_error(e));
        }
        self.writer.settle();
        Ok(())
    }

    fn record_error(&self, source: crate::history::RecordError) -> JournalError {
        JournalError::Record {
            path: self.writer.path.clone(),
            source,
        }
    }

    /// What the history answered, a refusal as this journal's
    /// [`record_error`](Self::record_error).
    fn recorded<T>(
        &self,
        answer: Result<T, crate::history::RecordError>,
    ) -> Result<T, JournalError> {
        answer.map_err(|source| self.record_error(source))
    }
}

impl Store for JournaledHistory {
    type Error = JournalError;

    fn history(&self) -> &History {
        &self.history
    }

    /// Writes the entries as one record (one line, one write), then records them in
    /// memory. On any error nothing was recorded: the history is unchanged and the file
    /// holds no part of the batch, now or after reopening.
    fn record(&mut self, entries: Vec<NewEntry>) -> Result<EntryId, JournalError> {
        self.writer.usable()?;
        let first = self.history.next_id();
        let Some(write) = self.recorded(self.history.draft_entries(entries))? else {
            return Ok(first);
        };
        let at = self
            .writer
            .write(&RecordOut::of(&write.entries, write.key.as_deref()))?;
        let ids = write.entries.len();
        self.settle(at, ids, Change::Entries(write))?;
        Ok(first)
    }

    /// Checks the compaction record against the view, writes it (one line, one write),
    /// then commits it in memory, evicting the originals that left the view (unless
    /// [`OpenOptions::keep_originals`]). On any error nothing changed.
    fn apply(&mut self, compaction: Compaction) -> Result<(), JournalError> {
        self.writer.usable()?;
        let checked = self.recorded(self.history.check(compaction))?;
        self.apply_checked(checked)
    }

    /// Writes a compaction checked against this history (one line, one write), then
    /// commits it in memory as [`apply`](Store::apply) does. A check made before a later
    /// write, or on another history, is refused before anything is written.
    fn apply_checked(&mut self, checked: CheckedCompaction) -> Result<(), JournalError> {
        self.writer.usable()?;
        let checked = self.recorded(self.history.current(checked))?;
        let at = self
            .writer
            .write(&RecordOut::Compaction(checked.compaction()))?;
        let ids = checked.summaries();
        self.settle(at, ids, Change::Compaction(checked))
    }

    fn set_request_overhead_tokens(&mut self, tokens: u64) -> Result<(), JournalError> {
        JournaledHistory::set_request_overhead_tokens(self, tokens)
    }
}

// A journaled history is held across `.await` points and moved into spawned tasks.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<JournaledHistory>();
    send_sync::<JournalError>();
    send_sync::<crate::history::RecallError>();
};
