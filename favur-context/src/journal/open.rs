//! Opening a journal: lock the file, read it back, refuse or repair what is damaged, and
//! resume writing after the last good record.

use std::fs::{File, TryLockError};
use std::io::{self, BufReader};
use std::path::Path;
use std::sync::Arc;

use super::fs::{JournalFile, move_aside, open_journal, sync_parent};
use super::options::{Durability, JOURNAL_FORMAT, OpenOptions, OpenReport, Salvaged};
use super::readback::FileOriginals;
use super::scan::{Damage, Scan, scan};
use super::writer::Writer;
use super::{Header, JournalError, JournaledHistory, RecordOut, sealed};
use crate::history::NewEntry;
use crate::store_trait::Store;

impl JournaledHistory {
    /// Opens the journal at `path` with `options`; `setup` gives the entries a journal
    /// created now starts with.
    pub(crate) fn open_with(
        path: &Path,
        options: &OpenOptions,
        setup: Option<Box<dyn FnOnce() -> Vec<NewEntry> + '_>>,
    ) -> Result<JournaledHistory, JournalError> {
        let file = lock(open_journal(path, options.follow_symlinks)?, path)?;
        let file_len = file
            .metadata()
            .map_err(io(path, "read the length of"))?
            .len();
        let originals = originals(&file, path, options)?;
        let mut scan = read(&file, path, options, originals.as_ref())?;
        let mut report = OpenReport {
            created: scan.records == 0,
            records: scan.records,
            torn_tail: scan.torn.clone(),
            salvaged: None,
            seal_head: None,
        };
        if let Some(damage) = scan.damage.take() {
            report.salvaged = Some(salvage(
                &file,
                path,
                options,
                damage,
                scan.header,
                file_len,
            )?);
        }
        cut_tail(&file, path, options, &scan, file_len)?;
        if let Some(o) = &originals {
            o.set(std::mem::take(&mut scan.locators));
        }
        let writer = resume(file, path, options, &mut scan, originals.as_ref())?;
        let mut journal = JournaledHistory {
            history: scan.history,
            writer,
            originals,
            report,
        };
        if !scan.header {
            journal.write_header(path, options)?;
        }
        journal.report.seal_head = journal.seal_head();
        if let Some(setup) = setup
            && journal.report.created
        {
            journal.record(setup())?;
        }
        Ok(journal)
    }

    /// Starts a new journal: writes its header (sealed when `options` has a key).
    fn write_header(&mut self, path: &Path, options: &OpenOptions) -> Result<(), JournalError> {
        let header = Header {
            format: JOURNAL_FORMAT,
            framing_tokens: self.history.framing_tokens(),
            counter: Some(self.history.counter().id().to_owned()),
            seal: self.start_seal(options),
        };
        self.writer.write(&RecordOut::Journal(header))?;
        self.writer.settle();
        if syncs(options) {
            sync_parent(path);
        }
        Ok(())
    }

    /// Seals a new journal when `options` has a key: its chain id, for the header.
    fn start_seal(&mut self, options: &OpenOptions) -> Option<String> {
        let (sealer, id) = sealed::Sealer::start(options.seal.as_ref()?);
        if let Some(o) = &self.originals {
            o.seal(Arc::clone(&sealer.marks));
        }
        self.writer.seal = Some(sealer);
        Some(id)
    }
}

/// The error of an I/O `action` on the journal at `path`.
fn io<'a>(path: &'a Path, action: &'static str) -> impl FnOnce(io::Error) -> JournalError + 'a {
    move |source| JournalError::Io {
        path: path.to_path_buf(),
        action,
        source,
    }
}

/// Whether writes are synced (anything but [`Durability::Flush`]).
fn syncs(options: &OpenOptions) -> bool {
    options.durability != Durability::Flush
}

/// Takes the journal's lock: one writer at a time.
fn lock(file: File, path: &Path) -> Result<File, JournalError> {
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(JournalError::Locked {
            path: path.to_path_buf(),
        }),
        Err(TryLockError::Error(source)) => Err(io(path, "lock")(source)),
    }
}

/// The reader of originals that leave the view, unless every original is kept in memory.
fn originals(
    file: &File,
    path: &Path,
    options: &OpenOptions,
) -> Result<Option<Arc<FileOriginals>>, JournalError> {
    if options.keep_originals {
        return Ok(None);
    }
    let originals = FileOriginals::open(path, file, Arc::clone(&options.counter));
    Ok(Some(Arc::new(originals.map_err(io(path, "open"))?)))
}

/// Reads the journal back into a new history (evicting originals as they leave the view
/// when there is an `originals` reader).
fn read(
    file: &File,
    path: &Path,
    options: &OpenOptions,
    originals: Option<&Arc<FileOriginals>>,
) -> Result<Scan, JournalError> {
    let mut history = options.new_history();
    if let Some(o) = originals {
        history = history.with_originals(Arc::clone(o) as _);
    }
    scan(
        BufReader::with_capacity(1 << 16, file),
        path,
        options,
        history,
    )
}

/// Damage found on reading: an error, unless `options` salvages a journal (one with a
/// header), which moves the damaged rest aside and says where.
fn salvage(
    file: &File,
    path: &Path,
    options: &OpenOptions,
    damage: Damage,
    header: bool,
    file_len: u64,
) -> Result<Salvaged, JournalError> {
    if !options.salvage {
        return Err(damage.into_error(path));
    }
    if !header {
        // Salvage keeps a journal's good records; this file has none to keep.
        return Err(JournalError::NotAJournal {
            path: path.to_path_buf(),
        });
    }
    let moved_to = move_aside(file, path, damage.offset, file_len, syncs(options))?;
    tracing::warn!(
        journal = %path.display(),
        line = damage.line,
        offset = damage.offset,
        moved_to = %moved_to.display(),
        "salvaged a damaged journal: {}", damage.problem
    );
    Ok(Salvaged {
        line: damage.line,
        offset: damage.offset,
        problem: damage.problem,
        moved_to: Some(moved_to),
        bytes: file_len.saturating_sub(damage.offset),
    })
}

/// Cuts the file back to the end of its last good record (a torn last line, or damage
/// already moved aside).
fn cut_tail(
    file: &File,
    path: &Path,
    options: &OpenOptions,
    scan: &Scan,
    file_len: u64,
) -> Result<(), JournalError> {
    if scan.end >= file_len {
        return Ok(());
    }
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
        .map_err(io(path, "cut off the damaged end of"))?;
    if syncs(options) {
        file.sync_data().map_err(io(path, "sync"))?;
    }
    Ok(())
}

/// The writer that appends after the last good record: a complete last record that lacked
/// its `\n` ended, a sealed journal's chain taken up where it stopped.
fn resume(
    file: File,
    path: &Path,
    options: &OpenOptions,
    scan: &mut Scan,
    originals: Option<&Arc<FileOriginals>>,
) -> Result<Writer, JournalError> {
    let resumed = scan.seal.chain.take();
    let file = JournalFile {
        file,
        #[cfg(feature = "fault-injection")]
        faults: options.faults,
    };
    if scan.unterminated {
        // A complete last record whose `\n` was never written: kept, and ended.
        tracing::warn!(journal = %path.display(), offset = scan.end, "kept a complete last record that lacked its newline");
        file.append(b"\n", scan.end)
            .map_err(io(path, "end the last record of"))?;
        scan.end += 1;
    }
    let mut writer = Writer::new(
        file,
        path,
        scan.end,
        options.durability,
        options.max_line_bytes,
    )
    .map_err(io(path, "read the metadata of"))?;
    if let Some(chain) = resumed {
        let sealer = sealed::Sealer::new(chain, std::mem::take(&mut scan.seal.table));
        if let Some(o) = originals {
            o.seal(Arc::clone(&sealer.marks));
        }
        writer.seal = Some(sealer);
    }
    Ok(writer)
}
