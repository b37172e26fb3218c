//! Compile-pass and compile-fail tests (trybuild).
//!
//! `tests/ui/pass/*.rs` must compile and run, on any compiler. `tests/ui/fail/<category>/*.rs`
//! must fail to compile with errors containing the phrases of their `.phrases` file, on any
//! compiler; on the compiler recorded in `RUSTC_VERSION` (`cfg(ui_compiler)`, set by
//! `build.rs`) their output must also be exactly the committed `.stderr`. See `README.md`.

use std::path::Path;

use favur_context_ui_tests::{check_against_stderr, compile_fail_cases, fail_cases, is_ci};

#[test]
fn ui() {
    let ci = is_ci(std::env::var("CI").ok().as_deref());
    if std::env::var_os("FAVUR_UI_SKIP").is_some_and(|v| !v.is_empty()) {
        // A skipped suite checks nothing, so CI must never skip it.
        assert!(
            !ci,
            "the ui suite is skipped (FAVUR_UI_SKIP is set) but CI is set: CI must run it"
        );
        report("SKIPPED ui tests: FAVUR_UI_SKIP is set");
        return;
    }

    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases = match fail_cases(&manifest.join("tests/ui/fail")) {
        Ok(cases) => cases,
        Err(problems) => panic!("the compile-fail cases are not in order:\n{problems}"),
    };

    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    #[cfg(ui_compiler)]
    t.compile_fail("tests/ui/fail/*/*.rs");
    // trybuild runs the cases when `t` is dropped, and panics on a failure.
    drop(t);

    let problems = if cfg!(ui_compiler) {
        // trybuild has just checked that each `.stderr` is exactly the compiler's output.
        check_against_stderr(&cases)
    } else {
        report(&format!(
            "ui tests: the .stderr files were generated with rustc {}, this is rustc {}: \
             checking that every compile-fail case fails with its key phrases instead of \
             comparing the .stderr exactly (see ui-tests/README.md)",
            env!("UI_RUSTC_EXPECTED"),
            env!("UI_RUSTC_FOUND"),
        ));
        let workspace = manifest.parent().unwrap_or(manifest);
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| workspace.join("target"));
        compile_fail_cases(workspace, &target.join("tests/ui-phrases"), &cases)
            .unwrap_or_else(|e| panic!("the phrase check could not run: {e}"))
    };
    assert!(
        problems.is_empty(),
        "{} problem(s) with the compile-fail cases:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Written to the real stderr (not the captured `eprintln!`) so it is visible.
fn report(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n{message}\n");
}
