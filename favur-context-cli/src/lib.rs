//! The `favur-context` command's library: replay recorded agent transcripts through a
//! retention policy and measure what it keeps, what it costs and which append sites are
//! misclassified.
//!
//! The pieces: [`transcript`] loads and classifies transcripts (with a
//! [`favur_context::import::rules::Rules`] file), [`replay`] re-runs them step by step under a
//! [`strategy::Strategy`] (the policy under test or a baseline), [`search`] finds the
//! baselines' budgets that match the policy's mean request tokens, [`report`] aggregates
//! the figures into tables and [`svg`] draws them. See `docs/replay.md` for the metric
//! definitions.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod audit;
mod audit_error;
mod blocks;
pub mod cache_bill;
pub mod cached;
pub mod cli;
pub mod engine;
pub mod idents;
pub mod inspect;
pub mod lockfile;
pub mod observe;
pub mod replay;
pub mod report;
pub mod search;
pub mod sites;
pub mod spans;
pub mod strategy;
mod suggest;
pub mod svg;
pub mod sweep;
pub mod sweep_svg;
pub mod transcript;
pub mod wiring;

/// Why a replay failed.
///
/// ```
/// let e = favur_context_cli::ReplayError::Internal("x");
/// assert_eq!(e.to_string(), "internal error: x");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// A compaction record could not be applied to the view.
    #[error("compaction could not be applied: {0}")]
    Apply(#[from] favur_context::store::RecordError),
    /// The strategy refused the request: usage at or over its limit.
    #[error("request refused: {message}")]
    Refused {
        /// What the engine said.
        message: String,
    },
    /// The compaction engine failed.
    #[error("compaction failed: {0}")]
    Compact(String),
    /// The renderer failed.
    #[error("rendering failed: {0}")]
    Render(String),
    /// The dump or chart could not be written.
    #[error("cannot write {what}: {source}")]
    Write {
        /// What was being written.
        what: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A bug in the replay itself.
    #[error("internal error: {0}")]
    Internal(&'static str),
}
