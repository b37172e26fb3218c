use super::{Difference, diff, read, write};
use crate::sites::{SitesError, scan_source};

#[test]
fn a_lockfile_reads_back_what_was_written() -> Result<(), SitesError> {
    let path = std::env::temp_dir().join(format!("favur-lock-unit-{}.json", std::process::id()));
    let found = scan_source("a.rs", "fn f() { strict!(user: \"x\"); }")?;
    write(&path, &found)?;
    let back = read(&path);
    let _ = std::fs::remove_file(&path);
    assert_eq!(back?, found);
    Ok(())
}

#[test]
fn a_lockfile_of_an_unknown_format_is_refused_by_number() {
    let path = std::env::temp_dir().join(format!("favur-lock-bad-{}.json", std::process::id()));
    assert!(std::fs::write(&path, "{\"format\": 9, \"sites\": []}").is_ok());
    let err = read(&path).err().map(|e| e.to_string());
    let _ = std::fs::remove_file(&path);
    assert!(
        err.is_some_and(|e| e.contains("format 9")),
        "a format-9 lockfile must be refused"
    );
}

#[test]
fn moved_sites_are_no_difference_and_a_changed_class_is_named() -> Result<(), SitesError> {
    let locked = scan_source(
        "a.rs",
        "fn f() {\n fuzzy!(user: \"a\");\n forgettable!(user: \"b\");\n}",
    )?;
    let moved = scan_source(
        "a.rs",
        "\n\nfn f() {\n fuzzy!(user: \"a\");\n forgettable!(user: \"b\");\n}",
    )?;
    assert!(diff(&locked, &moved).is_empty());
    let changed = scan_source(
        "a.rs",
        "fn f() {\n fuzzy!(user: \"a\");\n strict!(user: \"b\");\n}",
    )?;
    let d = diff(&locked, &changed);
    assert!(matches!(&d[..], [Difference::Changed { .. }]));
    assert_eq!(
        d[0].to_string(),
        "a.rs:3: class changed in f (`strict!` strict, locked at line 3 as `forgettable!` forgettable)"
    );
    Ok(())
}
