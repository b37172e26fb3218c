//! Integration tests for favur-context live in `tests/`.
