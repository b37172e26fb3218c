//! The `favur-context` command: replay recorded agent transcripts through a retention
//! policy and measure what it keeps, what it costs and which append sites are
//! misclassified; audit and inspect a history; list the classification sites of a codebase.
//!
//! The crate is the binary's (`publish = false`); its one public item is [`main`], what the
//! binary runs. Inside, `transcript` loads and classifies transcripts (with a
//! `favur_context::import::rules::Rules` file), `replay` re-runs them step by step under a
//! `strategy::Strategy` (the policy under test or a baseline), `search` finds the
//! baselines' budgets that match the policy's mean request tokens, `report` aggregates the
//! figures into tables and `svg` draws them; `audit`, `inspect` and `sites` are the other
//! subcommands. See `docs/replay.md` for the metric definitions. Each module's checks are
//! unit tests beside it; `src/tests/` drives the library end to end and `tests/` runs the
//! binary as a process.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod audit;
mod audit_error;
mod blocks;
mod cache_bill;
mod cached;
mod cli;
mod commands;
mod engine;
mod fate;
mod idents;
mod inspect;
mod observe;
mod replay;
mod report;
mod search;
mod sites;
mod span_tally;
mod spans;
mod strategy;
mod suggest;
mod svg;
mod sweep;
mod sweep_svg;
mod tally;
mod transcript;
mod wiring;

pub use commands::main;

#[cfg(test)]
mod tests;

/// Why a replay failed.
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
