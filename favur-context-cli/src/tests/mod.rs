//! The suites that drive the library end to end: replay, reports, spans, rules, audit
//! and sites on hand-made transcripts and the shared traces. The binary's own tests (it
//! run as a process) are in `tests/`.

mod audit;
mod cached;
pub(crate) mod common;
mod dump;
mod metrics;
mod report;
mod rules;
mod sites;
mod spans;
mod traces;
