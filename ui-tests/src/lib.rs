//! Compile-pass and compile-fail tests for favur-context live in `tests/`.
