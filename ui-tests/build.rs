//! Enables the exact `.stderr` comparison of the ui test (`cfg(ui_compiler)`) only on the
//! compiler the committed `.stderr` files were generated with, recorded in `RUSTC_VERSION`
//! (e.g. `1.95.0`). Diagnostics change between compiler releases, so comparing them exactly
//! on any other compiler would fail for reasons unrelated to this library; there the test
//! checks the key phrases of each case instead (see `tests/ui.rs`).

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(ui_compiler)");
    println!("cargo::rerun-if-changed=RUSTC_VERSION");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=RUSTC");

    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_owned());
    // Either just the version (`1.95.0`) or a whole `rustc --version` line.
    let expected = std::fs::read_to_string(Path::new(&manifest).join("RUSTC_VERSION"))
        .map(|s| version_of(s.trim()))
        .unwrap_or_default();

    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let found = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|line| version_of(line.trim()))
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "unknown".to_owned());

    println!("cargo::rustc-env=UI_RUSTC_EXPECTED={expected}");
    println!("cargo::rustc-env=UI_RUSTC_FOUND={found}");
    if !expected.is_empty() && found == expected {
        println!("cargo::rustc-cfg=ui_compiler");
    } else {
        println!(
            "cargo::warning=ui tests: the .stderr files were generated with rustc {expected}, this is rustc {found}; the compile-fail cases are checked by their key phrases, not exactly (see ui-tests/README.md)"
        );
    }
}

/// `rustc 1.95.0 (59807616e 2026-04-14)` -> `1.95.0`; `1.95.0` -> `1.95.0`.
fn version_of(text: &str) -> String {
    let mut words = text.split_whitespace();
    match words.next() {
        Some("rustc") => words.next().unwrap_or_default().to_owned(),
        Some(version) => version.to_owned(),
        None => String::new(),
    }
}
