//! The journal file on disk: appending (with the faults tests inject), cutting back,
//! syncing, and moving a damaged end aside.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::error::JournalError;

/// The writer's handle of the journal file (it holds the lock).
#[derive(Debug)]
pub(super) struct JournalFile {
    pub(super) file: File,
    #[cfg(feature = "fault-injection")]
    pub(super) faults: Faults,
}

/// Faults to inject into a journal's file, for tests of what a failed write leaves.
/// Testing only (feature `fault-injection`).
#[cfg(feature = "fault-injection")]
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Appends fail with "no space left on device" once the file would grow past this
    /// length, after writing the part that fits (a short write, as a full disk does).
    pub file_limit: Option<u64>,
    /// Cutting the file back fails.
    pub fail_truncate: bool,
    /// Syncing fails.
    pub fail_sync: bool,
}

impl JournalFile {
    /// Appends `buf` at the end, which is `len` bytes in.
    pub(super) fn append(&self, buf: &[u8], len: u64) -> io::Result<()> {
        #[cfg(feature = "fault-injection")]
        if let Some(limit) = self.faults.file_limit
            && len + buf.len() as u64 > limit
        {
            let fits = usize::try_from(limit.saturating_sub(len)).unwrap_or(usize::MAX);
            (&self.file).write_all(&buf[..fits.min(buf.len())])?;
            return Err(io::Error::other("no space left on device (injected)"));
        }
        let _ = len;
        (&self.file).write_all(buf)
    }

    /// Cuts the file back to `len` bytes.
    pub(super) fn truncate(&self, len: u64) -> io::Result<()> {
        #[cfg(feature = "fault-injection")]
        if self.faults.fail_truncate {
            return Err(io::Error::other("truncate failed (injected)"));
        }
        self.file.set_len(len)
    }

    /// Syncs the file's data to disk.
    pub(super) fn sync(&self) -> io::Result<()> {
        #[cfg(feature = "fault-injection")]
        if self.faults.fail_sync {
            return Err(io::Error::other("sync failed (injected)"));
        }
        self.file.sync_data()
    }
}

/// Copies the journal from `offset` to the end into a new file next to it and returns
/// that file's path.
pub(super) fn move_aside(
    file: &File,
    path: &Path,
    offset: u64,
    sync: bool,
) -> Result<PathBuf, JournalError> {
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
pub(super) fn sync_parent(path: &Path) {
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
