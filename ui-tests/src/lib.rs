//! Compile-pass and compile-fail (trybuild) tests of favur-context's macros and of the
//! compile-time guarantee that nothing unclassified can be appended. The cases live in
//! `tests/ui/`; see `README.md`.
