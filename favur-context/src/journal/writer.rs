//! Writing records: each one line, in one write, cut back on failure; and the poison
//! that stops all writing once memory and file might disagree.

use std::io;
use std::path::{Path, PathBuf};

use super::error::JournalError;
use super::format::RecordOut;
use super::fs::{Identity, JournalFile};
use super::options::Durability;
use super::readback::Locator;
use super::sealed::{Sealer, wrap};

/// Appends records to the journal file.
#[derive(Debug)]
pub(super) struct Writer {
    pub(super) file: JournalFile,
    pub(super) path: PathBuf,
    /// Length of the file: the end of the last record written.
    pub(super) len: u64,
    pub(super) durability: Durability,
    pub(super) unsynced: u32,
    pub(super) max_line_bytes: usize,
    buf: Vec<u8>,
    /// A failure left the file and memory possibly disagreeing.
    poisoned: bool,
    /// A record is written but memory has not caught up yet ([`Writer::settle`]). Still
    /// set when a panic interrupted that, which poisons the journal.
    in_flight: bool,
    /// The file the path named when it was opened.
    identity: Identity,
    /// A sealed journal's chain: every line written is sealed.
    pub(super) seal: Option<Sealer>,
    /// A sealed line's record, before it is sealed.
    inner: Vec<u8>,
}

impl Writer {
    pub(super) fn new(
        file: JournalFile,
        path: &Path,
        len: u64,
        durability: Durability,
        max_line_bytes: usize,
    ) -> io::Result<Writer> {
        let identity = file.identity()?;
        Ok(Writer {
            file,
            path: path.to_path_buf(),
            len,
            durability,
            unsynced: 0,
            max_line_bytes,
            buf: Vec::with_capacity(4096),
            poisoned: false,
            in_flight: false,
            identity,
            seal: None,
            inner: Vec::new(),
        })
    }

    /// Whether the journal takes no more writes.
    pub(super) fn is_poisoned(&self) -> bool {
        self.poisoned || self.in_flight
    }

    /// `Err(Poisoned)` if the journal takes no more writes.
    pub(super) fn usable(&self) -> Result<(), JournalError> {
        if self.is_poisoned() {
            return Err(JournalError::Poisoned {
                path: self.path.clone(),
            });
        }
        Ok(())
    }

    /// Stops all writing.
    pub(super) fn poison(&mut self) {
        self.poisoned = true;
    }

    fn io(&self, action: &'static str, source: io::Error) -> JournalError {
        JournalError::Io {
            path: self.path.clone(),
            action,
            source,
        }
    }

    /// Writes one record as one line, in one write, synced as the durability says. On
    /// failure the file is cut back to where it was (or, if that fails too, the journal
    /// is poisoned) and nothing is acknowledged. On success the record is in flight until
    /// [`settle`](Writer::settle): the caller records it in memory first.
    pub(super) fn write(&mut self, record: &RecordOut<'_>) -> Result<Locator, JournalError> {
        self.usable()?;
        self.buf.clear();
        let out = match self.seal {
            Some(_) => &mut self.inner,
            None => &mut self.buf,
        };
        out.clear();
        if let Err(e) = serde_json::to_writer(&mut *out, record) {
            // Plain data with string keys: only an I/O error of the Vec could get here.
            return Err(self.io("encode a record for", io::Error::other(e)));
        }
        let mac = self.seal.as_ref().map(|s| s.seal(&self.inner));
        if let Some(mac) = &mac {
            wrap(&mut self.buf, mac, &self.inner);
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
        self.in_flight = true;
        if let Err(source) = self.file.append(&self.buf, self.len) {
            self.roll_back(at.offset);
            return Err(self.io("append to", source));
        }
        self.len += self.buf.len() as u64;
        // Whoever deleted, replaced or cut the file, the record is not where a reopen
        // finds it: not acknowledged, and no more writes.
        match self.file.changed(self.identity, &self.path, self.len) {
            Ok(None) => {}
            Ok(Some(change)) => {
                self.poisoned = true;
                return Err(JournalError::Changed {
                    path: self.path.clone(),
                    change,
                });
            }
            Err(source) => {
                self.poisoned = true;
                return Err(self.io("check the file of", source));
            }
        }
        let sync_now = match self.durability {
            Durability::Flush => false,
            Durability::SyncEach => true,
            Durability::SyncEvery(n) => {
                self.unsynced += 1;
                self.unsynced >= n.max(1)
            }
        };
        if sync_now {
            if let Err(source) = self.file.sync() {
                // The record may or may not reach the disk: take it back and stop writing.
                self.roll_back(at.offset);
                self.poisoned = true;
                return Err(self.io("sync", source));
            }
            self.unsynced = 0;
        }
        if let (Some(seal), Some(mac)) = (&mut self.seal, mac) {
            seal.advance(at.offset, mac);
        }
        Ok(at)
    }

    /// The record written last is recorded in memory too.
    pub(super) fn settle(&mut self) {
        self.in_flight = false;
    }

    /// Cuts the file back to `len` after a failed write; poisons the journal if that
    /// fails too (then the file may hold a part of the record, which reopening cuts off
    /// as a torn line: each record is one line).
    fn roll_back(&mut self, len: u64) {
        match self.file.truncate(len) {
            Ok(()) => {
                self.len = len;
                self.in_flight = false;
            }
            Err(_) => self.poisoned = true,
        }
    }

    /// Syncs the file to disk now.
    pub(super) fn sync(&mut self) -> Result<(), JournalError> {
        if let Err(source) = self.file.sync() {
            self.poisoned = true;
            return Err(self.io("sync", source));
        }
        self.unsynced = 0;
        Ok(())
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if self.unsynced > 0 {
            // Best effort: `sync` reports errors; a drop cannot.
            let _ = self.file.sync();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer(dir: &Path) -> Writer {
        let path = dir.join("w.jsonl");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap();
        let file = JournalFile {
            file,
            #[cfg(feature = "fault-injection")]
            faults: super::super::fs::Faults::default(),
        };
        Writer::new(file, &path, 0, Durability::Flush, 1 << 20).unwrap()
    }

    #[test]
    fn a_record_not_settled_poisons_the_writer() {
        let dir = std::env::temp_dir().join(format!("favur-writer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut w = writer(&dir);
        let header = || {
            RecordOut::Journal(super::super::format::Header {
                format: 1,
                framing_tokens: 4,
                counter: None,
                seal: None,
            })
        };
        let at = w.write(&header()).unwrap();
        assert_eq!(at.offset, 0);
        // Written, memory not caught up (a panic would leave it so): no more writes.
        assert!(w.is_poisoned());
        assert!(matches!(
            w.write(&header()),
            Err(JournalError::Poisoned { .. })
        ));
        w.settle();
        assert!(!w.is_poisoned());
        let next = w.write(&header()).unwrap();
        assert_eq!(next.offset, u64::from(at.len));
        drop(w);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
