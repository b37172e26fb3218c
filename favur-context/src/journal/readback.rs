//! Reading an original back from the journal file: what a [`History`](crate::History)
//! inside a [`JournaledHistory`](super::JournaledHistory) asks for an entry it evicted.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use super::format::RecordIn;
use super::sealed::Marks;
use crate::history::Originals;
use crate::history::RecallError;
use crate::history::usage::recorded_cost;
use crate::history::view::Edit;
use crate::model::entry::{Entry, EntryId};
use crate::tokens::counter::TokenCounter;

/// Where one record sits in the journal file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Locator {
    pub(super) offset: u64,
    /// Length of the line including its `\n`.
    pub(super) len: u32,
}

/// The journal file as the history's [`Originals`]: a read handle and where each id's
/// record is. On Unix the handle is opened on its own (so a copy of the history that
/// outlives the journal never holds the writer's lock); on Windows, where a lock keeps
/// other handles from reading, it is the writer's handle duplicated.
pub(super) struct FileOriginals {
    path: PathBuf,
    file: File,
    /// The history's counter: an original read back is recounted as it was on replay.
    counter: Arc<dyn TokenCounter>,
    /// Indexed by id; a batch's entries and a compaction's summaries share their line's.
    locators: RwLock<Vec<Locator>>,
    /// A sealed journal's MACs: every line read back is verified against them.
    marks: OnceLock<Arc<Marks>>,
}

impl std::fmt::Debug for FileOriginals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileOriginals")
            .field("path", &self.path)
            .field("counter", &self.counter.id())
            .finish_non_exhaustive()
    }
}

impl FileOriginals {
    /// A reader of the journal at `path`, whose writer's handle is `writer`.
    pub(super) fn open(
        path: &Path,
        writer: &File,
        counter: Arc<dyn TokenCounter>,
    ) -> io::Result<FileOriginals> {
        #[cfg(windows)]
        let file = writer.try_clone()?;
        #[cfg(not(windows))]
        let file = {
            let _ = writer;
            File::open(path)?
        };
        Ok(FileOriginals {
            path: path.to_path_buf(),
            file,
            counter,
            locators: RwLock::new(Vec::new()),
            marks: OnceLock::new(),
        })
    }

    /// Records where the next `n` ids' record is.
    pub(super) fn push(&self, at: Locator, n: usize) {
        let mut locators = self
            .locators
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        locators.extend(std::iter::repeat_n(at, n));
    }

    /// The journal is sealed: every line read back is verified against `marks`.
    pub(super) fn seal(&self, marks: Arc<Marks>) {
        let _ = self.marks.set(marks);
    }

    /// Replaces the table (after a scan).
    pub(super) fn set(&self, table: Vec<Locator>) {
        *self
            .locators
            .write()
            .unwrap_or_else(PoisonError::into_inner) = table;
    }
}

impl Originals for FileOriginals {
    fn original(&self, id: EntryId) -> Result<Entry, RecallError> {
        let at = {
            let locators = self.locators.read().unwrap_or_else(PoisonError::into_inner);
            let at = usize::try_from(id.0)
                .ok()
                .and_then(|i| locators.get(i).copied());
            at.ok_or(RecallError::UnknownId {
                id,
                next: EntryId(locators.len() as u64),
            })?
        };
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
        let content = match self.marks.get() {
            Some(marks) => marks.check(at.offset, content).map_err(corrupt)?,
            None => content,
        };
        let record: RecordIn =
            serde_json::from_slice(content).map_err(|e| corrupt(e.to_string()))?;
        let mut found = find_entry(record, id)
            .ok_or_else(|| corrupt("the record there is another entry's".into()))?;
        found.tokens = recorded_cost(self.counter.as_ref(), &found).0;
        Ok(found)
    }
}

/// The entry with id `id` in a record read back (an entry, a batch's, a compaction's
/// summary), if it holds it.
pub(crate) fn find_entry(record: RecordIn, id: EntryId) -> Option<Entry> {
    match record {
        RecordIn::Entry(e) => (e.id == id).then_some(e),
        RecordIn::Batch(entries) | RecordIn::Keyed { entries, .. } => {
            entries.into_iter().find(|e| e.id == id)
        }
        RecordIn::Compaction(c) => c.edits.into_iter().find_map(|edit| match edit {
            Edit::Summarize { summary } if summary.id() == id => summary.into_entry(),
            _ => None,
        }),
        RecordIn::Journal(_) | RecordIn::RequestOverhead(_) => None,
    }
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
    use std::io::{Read, Seek, SeekFrom};
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}
