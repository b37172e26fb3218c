//! [`AuditError`]: why `audit`, `observe` and `inspect` failed (its own module, so that the
//! commands that read histories and the audit that reads their reports do not import each
//! other).

use std::path::PathBuf;

use crate::ReplayError;
use crate::transcript::TranscriptError;
use crate::wiring::CliError;

/// Why an audit failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// A transcript was given without `--rules` and `--policy`.
    #[error("{}: a transcript is audited by replaying it: give --rules and --policy", file.display())]
    NeedsRules {
        /// The transcript.
        file: PathBuf,
    },
    /// A file could not be read.
    #[error("cannot read {}: {source}", file.display())]
    Io {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write {}: {source}", file.display())]
    Write {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The seal key file holds no usable key.
    #[error("seal key {}: {source}", file.display())]
    SealKey {
        /// The key file.
        file: PathBuf,
        /// Why it is no key.
        source: favur_context::store::SealKeyError,
    },
    /// A journal could not be read.
    #[error("journal {}: {source}", file.display())]
    Journal {
        /// The file.
        file: PathBuf,
        /// What the journal reader said.
        source: favur_context::journal::JournalError,
    },
    /// A saved history could not be loaded.
    #[error("history {}: {source}", file.display())]
    History {
        /// The file.
        file: PathBuf,
        /// What the loader said.
        source: favur_context::store::LoadError,
    },
    /// The rules, policy or a transcript were rejected, or a replay failed.
    #[error(transparent)]
    Cli(#[from] CliError),
}

impl From<TranscriptError> for AuditError {
    fn from(e: TranscriptError) -> Self {
        AuditError::Cli(CliError::Transcript(e))
    }
}

impl From<ReplayError> for AuditError {
    fn from(e: ReplayError) -> Self {
        AuditError::Cli(CliError::Replay(e))
    }
}
