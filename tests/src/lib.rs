//! Integration tests for favur-context live in `tests/`; this library holds what the
//! tests, their helper binaries and the benchmarks share.

pub mod pg;
