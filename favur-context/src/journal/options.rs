//! How a journal is opened ([`OpenOptions`], [`Durability`]) and what opening found
//! ([`OpenReport`]).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::JournaledHistory;
use super::error::{Corruption, JournalError};
use crate::history::NewEntry;
use crate::history::{DEFAULT_FRAMING_TOKENS, History};
use crate::store_trait::seal::{SealHead, SealKey};
use crate::tokens::counter::{HeuristicCounter, TokenCounter};

/// The journal format version this library writes and reads.
///
/// ```
/// use favur_context::journal::{JournalError, OpenOptions, JOURNAL_FORMAT};
/// let header = |v: u32| format!("{{\"journal\":{{\"format\":{v},\"framing_tokens\":4}}}}\n");
/// assert!(OpenOptions::new().read(header(JOURNAL_FORMAT).as_bytes()).is_ok());
/// let newer = OpenOptions::new().read(header(JOURNAL_FORMAT + 1).as_bytes());
/// assert!(matches!(newer, Err(JournalError::Version { .. })));
/// ```
pub const JOURNAL_FORMAT: u32 = 1;

/// The longest line (record) accepted by default: 64 MiB.
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

/// A torn last line that opening cut off: an append that was never acknowledged.
///
/// ```
/// let header = "{\"journal\":{\"format\":1,\"framing_tokens\":4}}\n";
/// let torn = format!("{header}{{\"entry\":{{\"id\":0");
/// let (history, report) = favur_context::journal::OpenOptions::new().read(torn.as_bytes())?;
/// let t = report.torn_tail.unwrap();
/// assert_eq!((t.line, t.offset, t.bytes), (2, header.len() as u64, 16));
/// assert!(history.is_empty());
/// # Ok::<(), favur_context::journal::JournalError>(())
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
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OpenReport {
    /// The journal is new: it was created, or held no record (only a header, or a torn
    /// first record). [`OpenOptions::open_or_create`] runs its setup exactly then.
    pub created: bool,
    /// Records loaded, not counting the header.
    pub records: u64,
    /// A torn last line that was cut off.
    pub torn_tail: Option<TornTail>,
    /// Damage recovered from with [`OpenOptions::salvage`].
    pub salvaged: Option<Salvaged>,
    /// A sealed journal's newest line once opened ([`OpenOptions::seal_key`]): keep it
    /// outside the journal to detect, on the next open, that its newest records were cut
    /// off (the data alone cannot show it). `None` for an unsealed journal.
    pub seal_head: Option<SealHead>,
}

impl OpenReport {
    /// Whether the journal opened without cutting or salvaging anything.
    ///
    /// ```
    /// let report = favur_context::journal::OpenReport { torn_tail: Some(favur_context::journal::TornTail { line: 2, offset: 50, bytes: 3 }), ..Default::default() };
    /// assert!(!report.is_clean());
    /// ```
    pub fn is_clean(&self) -> bool {
        self.torn_tail.is_none() && self.salvaged.is_none()
    }
}

/// How to open a journal: durability, fault handling, limits, token counter.
///
/// ```
/// use favur_context::journal::{Durability, OpenOptions};
/// use favur_context::{strict, Store};
/// let path = std::env::temp_dir().join(format!("favur-doc-opts-{}.jsonl", std::process::id()));
/// # let _ = std::fs::remove_file(&path);
/// let mut history = OpenOptions::new()
///     .durability(Durability::SyncEvery(64))
///     .max_line_bytes(1 << 20)
///     .open(&path)?;
/// history.append(strict!(user: "keep this"))?;
/// assert_eq!(history.durability(), Durability::SyncEvery(64));
/// # drop(history); std::fs::remove_file(&path).unwrap();
/// # Ok::<(), favur_context::journal::JournalError>(())
/// ```
#[derive(Clone)]
pub struct OpenOptions {
    pub(super) durability: Durability,
    pub(super) salvage: bool,
    pub(super) max_line_bytes: usize,
    pub(crate) keep_originals: bool,
    pub(crate) framing_tokens: u32,
    pub(crate) counter: Arc<dyn TokenCounter>,
    pub(crate) follow_symlinks: bool,
    pub(crate) seal: Option<Arc<SealKey>>,
    #[cfg(feature = "fault-injection")]
    pub(super) faults: super::fs::Faults,
}

impl fmt::Debug for OpenOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenOptions")
            .field("durability", &self.durability)
            .field("salvage", &self.salvage)
            .field("max_line_bytes", &self.max_line_bytes)
            .field("keep_originals", &self.keep_originals)
            .field("framing_tokens", &self.framing_tokens)
            .field("follow_symlinks", &self.follow_symlinks)
            .field("sealed", &self.seal.is_some())
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
    pub fn new() -> Self {
        OpenOptions {
            durability: Durability::Flush,
            salvage: false,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            keep_originals: false,
            framing_tokens: DEFAULT_FRAMING_TOKENS,
            counter: Arc::new(HeuristicCounter),
            follow_symlinks: false,
            seal: None,
            #[cfg(feature = "fault-injection")]
            faults: super::fs::Faults::default(),
        }
    }

    setters! {
        /// When writes are synced to disk (see [`Durability`]).
        durability(durability: Durability) => durability;

        /// On a damaged line, load everything before it instead of failing: the damaged line
        /// and everything after it are moved to `<journal>.damaged-<offset>` next to the
        /// journal, the journal is cut back to its last good record, and the
        /// [`OpenReport::salvaged`] says so. Off by default.
        salvage(salvage: bool) => salvage;

        /// The longest line accepted when reading, and the longest record written (a longer
        /// one is refused with [`JournalError::RecordTooLong`]). Capped at `u32::MAX`.
        max_line_bytes(limit: usize) => max_line_bytes = limit.min(u32::MAX as usize - 1);

        /// Keep every original in memory instead of evicting those that left the view (then
        /// [`History::entries`] holds every entry). Off by default: memory stays bounded by
        /// the view, and [`History::recall`] reads evicted originals back from the file.
        keep_originals(keep: bool) => keep_originals;

        /// The per-message framing tokens of a journal created by this open. An existing
        /// journal keeps the value in its header.
        framing_tokens(framing: u32) => framing_tokens;

        /// Whether a journal path that is a symbolic link is followed. Off by default: such
        /// a path is refused with [`JournalError::Symlink`] (on Unix the file is opened with
        /// `O_NOFOLLOW`, so a link put there after the check is refused too), and a dangling
        /// link never creates a file elsewhere. Whatever this says, only a regular file is
        /// opened ([`JournalError::NotAFile`]).
        ///
        /// ```
        /// # #[cfg(unix)] {
        /// use favur_context::journal::{JournalError, OpenOptions};
        /// let dir = std::env::temp_dir().join(format!("favur-doc-link-{}", std::process::id()));
        /// std::fs::create_dir_all(&dir).unwrap();
        /// let (target, link) = (dir.join("real.jsonl"), dir.join("link.jsonl"));
        /// # let _ = std::fs::remove_file(&link);
        /// std::os::unix::fs::symlink(&target, &link).unwrap(); // dangling
        /// let err = OpenOptions::new().open(&link).unwrap_err();
        /// assert!(matches!(err, JournalError::Symlink { .. }));
        /// assert!(!target.exists());
        /// let h = OpenOptions::new().follow_symlinks(true).open(&link).unwrap();
        /// assert!(target.exists());
        /// # drop(h); std::fs::remove_dir_all(&dir).unwrap();
        /// # }
        /// ```
        follow_symlinks(follow: bool) => follow_symlinks;

        /// The token counter: new appends are counted with it, and every record read back is
        /// recounted with it (a journal recorded with another counter is refused).
        ///
        /// ```
        /// use favur_context::journal::OpenOptions;
        /// use favur_context::tokens::TokenCounter;
        /// struct Bytes;
        /// impl TokenCounter for Bytes { fn count_text(&self, t: &str) -> u32 { t.len() as u32 } }
        /// let o = OpenOptions::new().counter(Bytes);
        /// # let _ = o;
        /// ```
        counter(counter: impl TokenCounter + 'static) => counter = Arc::new(counter);
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
    /// use favur_context::journal::OpenOptions;
    /// use favur_context::{fuzzy, Store};
    /// let path = std::env::temp_dir().join(format!("favur-doc-open-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let mut h = OpenOptions::new().open(&path)?;
    /// let id = h.append(fuzzy!(user: "hello"))?; // `Store::append`
    /// drop(h);
    /// let h = OpenOptions::new().open(&path)?;
    /// assert_eq!(h.history().recall(id).unwrap().message().text(), "hello");
    /// # drop(h); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::journal::JournalError>(())
    /// ```
    pub fn open(&self, path: impl AsRef<Path>) -> Result<JournaledHistory, JournalError> {
        JournaledHistory::open_with(path.as_ref(), self, None)
    }

    /// Opens the journal at `path`, or creates it with the entries `setup` returns (the
    /// system prompt, the task): `setup` runs only when the journal is new
    /// ([`OpenReport::created`]), and its entries are written as one batch, so a kill
    /// during setup leaves a journal that is still new, never half set up. On a resumed
    /// journal, answer [`History::pending_calls`] before the next request.
    ///
    /// # Errors
    ///
    /// As for [`open`](OpenOptions::open), and the write errors of
    /// [`Store::record`](crate::Store::record) for the setup batch.
    ///
    /// ```
    /// use favur_context::journal::OpenOptions;
    /// use favur_context::store::NewEntry;
    /// use favur_context::strict;
    /// let path = std::env::temp_dir().join(format!("favur-doc-ooc-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let setup = || vec![
    ///     NewEntry::pinned(strict!(system: "You are a coding agent.")),
    ///     NewEntry::appended(strict!(user: "Make the tests pass.")),
    /// ];
    /// let first = OpenOptions::new().open_or_create(&path, setup)?;
    /// assert!(first.report().created);
    /// drop(first);
    /// let again = OpenOptions::new().open_or_create(&path, setup)?; // setup does not run
    /// assert!(!again.report().created);
    /// assert_eq!(again.history().pinned().len(), 1); // one system prompt, not two
    /// assert_eq!(again.history().len(), 2);
    /// # drop(again); std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::journal::JournalError>(())
    /// ```
    pub fn open_or_create(
        &self,
        path: impl AsRef<Path>,
        setup: impl FnOnce() -> Vec<NewEntry>,
    ) -> Result<JournaledHistory, JournalError> {
        JournaledHistory::open_with(path.as_ref(), self, Some(Box::new(setup)))
    }

    /// Seals the journal with `key` (HMAC-SHA-256, see [`SealKey`]): a journal created by
    /// this open is sealed (every line carries a MAC chained to the one before it), and
    /// opening, reading and every original read back verify it. An added, removed or
    /// edited line, or another key, is [`JournalError::Tampered`] naming the line and
    /// record, and nothing is loaded. An existing journal that is not sealed is refused
    /// ([`Tamper::NotSealed`](crate::store::Tamper::NotSealed): its MACs may have been stripped);
    /// a sealed journal opened without a key is refused too
    /// ([`Tamper::KeyNeeded`](crate::store::Tamper::KeyNeeded)). Cutting off the newest lines is
    /// not visible in the data: keep [`OpenReport::seal_head`] elsewhere to see it.
    ///
    /// ```
    /// use favur_context::journal::{JournalError, OpenOptions};
    /// use favur_context::store::{SealKey, Tamper};
    /// use favur_context::{fuzzy, Store};
    /// # let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("sealed.jsonl");
    /// let sealed = OpenOptions::new().seal_key(SealKey::new([42u8; 32]).unwrap());
    /// let mut h = sealed.open(&path)?;
    /// h.append(fuzzy!(user: "transfer 10"))?;
    /// drop(h);
    /// // An edit of the same length, made without the key, is refused.
    /// let text = std::fs::read_to_string(&path).unwrap();
    /// std::fs::write(&path, text.replace("transfer 10", "transfer 99")).unwrap();
    /// let err = sealed.open(&path).unwrap_err();
    /// assert!(matches!(err, JournalError::Tampered { seq: 1, problem: Tamper::Mac, .. }));
    /// // Without the key, a sealed journal is not loaded unverified.
    /// let err = OpenOptions::new().open(&path).unwrap_err();
    /// assert!(matches!(err, JournalError::Tampered { problem: Tamper::KeyNeeded, .. }));
    /// # Ok::<(), favur_context::journal::JournalError>(())
    /// ```
    pub fn seal_key(mut self, key: SealKey) -> Self {
        self.seal = Some(Arc::new(key));
        self
    }

    /// Makes the journal's file fail as `faults` says. Testing only.
    #[cfg(feature = "fault-injection")]
    #[doc(hidden)]
    pub fn faults(mut self, faults: super::fs::Faults) -> Self {
        self.faults = faults;
        self
    }

    /// An empty history with this counter and framing.
    pub(crate) fn new_history(&self) -> History {
        History::with_shared(Arc::clone(&self.counter)).with_framing_tokens(self.framing_tokens)
    }
}
