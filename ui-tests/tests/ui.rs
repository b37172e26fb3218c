//! Compile-pass and compile-fail tests (trybuild).
//!
//! `tests/ui/pass/*.rs` must compile and run; `tests/ui/fail/<category>/*.rs` must fail to
//! compile with exactly the committed `.stderr`. Runs only on the compiler recorded in
//! `RUSTC_VERSION` (see `build.rs` and `README.md`).

#[cfg(ui_compiler)]
#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*/*.rs");
}

#[cfg(not(ui_compiler))]
#[test]
fn ui() {
    use std::io::Write;
    // Written to the real stderr (not the captured `eprintln!`) so the skip is visible.
    let _ = writeln!(
        std::io::stderr(),
        "\nSKIPPED ui tests: the .stderr files were generated with rustc {}, this is rustc {}; \
         see ui-tests/README.md to regenerate them\n",
        env!("UI_RUSTC_EXPECTED"),
        env!("UI_RUSTC_FOUND"),
    );
}
