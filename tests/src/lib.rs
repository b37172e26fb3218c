//! Integration tests for favur-context live in `tests/`; this library holds what the
//! tests, their helper binaries and the benchmarks share.

pub mod pg;

/// Runs `future` to its end on a new single-threaded runtime (time and I/O enabled): the
/// helper binaries' `main`.
#[cfg(feature = "postgres")]
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(future)
}
