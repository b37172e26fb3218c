//! The journal file on disk: appending (with the faults tests inject), cutting back,
//! syncing, and moving a damaged end aside.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
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

/// What the writer's file is, to notice a journal deleted, replaced or truncated under
/// it (see [`JournalFile::changed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Identity {
    #[cfg(unix)]
    dev_ino: (u64, u64),
}

impl JournalFile {
    /// The identity of the open file.
    pub(super) fn identity(&self) -> io::Result<Identity> {
        let m = self.file.metadata()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Ok(Identity {
                dev_ino: (m.dev(), m.ino()),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = m;
            Ok(Identity {})
        }
    }

    /// What happened to the journal, if anything: the handle is `identity` with `len`
    /// bytes, and `path` still names it.
    ///
    /// One `fstat` of the handle in the common case: a journal deleted, or replaced by a
    /// rename over its path, has no link left, and a truncated or foreign-written one has
    /// another length. The path is `stat`ed only to tell those apart, or when the file
    /// has other hard links (then the path could name another file while it still has
    /// links). Each syscall costs microseconds here, so the check stays one call.
    pub(super) fn changed(
        &self,
        identity: Identity,
        path: &Path,
        len: u64,
    ) -> io::Result<Option<&'static str>> {
        let m = self.file.metadata()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if m.nlink() != 1 {
                let now = match std::fs::metadata(path) {
                    Ok(now) => now,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        return Ok(Some("deleted"));
                    }
                    Err(e) => return Err(e),
                };
                if (now.dev(), now.ino()) != identity.dev_ino {
                    return Ok(Some("replaced by another file"));
                }
                if m.nlink() == 0 {
                    return Ok(Some("deleted"));
                }
            }
        }
        #[cfg(not(unix))]
        {
            let _ = identity;
            match std::fs::metadata(path) {
                Ok(now) if now.len() != m.len() => return Ok(Some("replaced by another file")),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Some("deleted")),
                Err(e) => return Err(e),
            }
        }
        if m.len() != len {
            return Ok(Some("truncated or written by another process"));
        }
        Ok(None)
    }
}

/// Opens the journal at `path` for reading and appending, creating it if it is missing:
/// a symbolic link only if `follow` (`O_NOFOLLOW` on Unix, a check of the path
/// elsewhere), a regular file only.
pub(super) fn open_journal(path: &Path, follow: bool) -> Result<File, JournalError> {
    let err = |action: &'static str| {
        move |source: io::Error| JournalError::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    };
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() && !follow => {
            return Err(JournalError::Symlink {
                path: path.to_path_buf(),
            });
        }
        Ok(m) if !m.file_type().is_symlink() && !m.is_file() => {
            return Err(JournalError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        _ => {}
    }
    if follow
        && let Ok(m) = std::fs::metadata(path)
        && !m.is_file()
    {
        return Err(JournalError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true).append(true).create(true);
    #[cfg(unix)]
    {
        // Never block opening a FIFO that appeared after the check.
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
        options.custom_flags(nofollow | libc::O_NONBLOCK);
    }
    let file = match options.open(path) {
        Ok(f) => f,
        // The path became a link between the check and the open.
        #[cfg(unix)]
        Err(e) if !follow && e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(JournalError::Symlink {
                path: path.to_path_buf(),
            });
        }
        Err(e) => return Err(err("open")(e)),
    };
    if !file
        .metadata()
        .map_err(err("read the metadata of"))?
        .is_file()
    {
        return Err(JournalError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    Ok(file)
}

/// Copies the journal from `offset` to `end` (its length when it was read) into a new
/// file next to it and returns that file's path. Reads at most `end - offset` bytes.
pub(super) fn move_aside(
    file: &File,
    path: &Path,
    offset: u64,
    end: u64,
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
    io::copy(&mut reader.take(end.saturating_sub(offset)), &mut out)
        .map_err(io("copy the damaged end of", path))?;
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
