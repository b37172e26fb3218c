//! `favur-context sites`: the inventory of classification sites and its lockfile check.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../favur-context/examples");
const LOCK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../favur-context/examples/sites.lock.json"
);

fn sites_bin(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_favur-context"))
        .arg("sites")
        .args(args)
        .output()
        .unwrap()
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("favur-sites-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_examples_match_their_committed_lockfile() {
    let out = sites_bin(&[EXAMPLES.as_ref(), "--check".as_ref(), LOCK.as_ref()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("sites match"));
}

/// Every `strict!(`, `fuzzy!(` and `forgettable!(` of the demo, found by plain text
/// search (the demo has no other kind of site and no macro in a comment or string).
#[test]
fn check_ignores_moved_lines_and_fails_naming_a_changed_class_and_added_or_removed_sites() {
    let demo = std::fs::read_to_string(Path::new(EXAMPLES).join("demo.rs")).unwrap();
    let d = temp("check");
    let src = d.join("src");
    std::fs::create_dir_all(&src).unwrap();
    let file = src.join("demo.rs");
    let lock = d.join("sites.lock.json");
    std::fs::write(&file, &demo).unwrap();
    let out = sites_bin(&[src.as_os_str(), "--write".as_ref(), lock.as_os_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let check = || sites_bin(&[src.as_os_str(), "--check".as_ref(), lock.as_os_str()]);
    assert!(check().status.success());

    // Unrelated lines above every site: the check still passes.
    const HELPER: &str =
        "// A comment.\n\n/// A helper with no site.\nfn helper() -> u32 {\n    7\n}\n\n";
    let anchor = demo
        .find("fn listing() -> String {")
        .expect("the demo's first fn");
    let with_helper = |text: &str| format!("{}{HELPER}{}", &text[..anchor], &text[anchor..]);
    let shift = HELPER.lines().count() as u32;
    let moved = with_helper(&demo);
    std::fs::write(&file, &moved).unwrap();
    let out = check();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // One class changed: the check fails and names it, and only it.
    let (at, _) = demo
        .match_indices("forgettable!(")
        .nth(1)
        .expect("a second forgettable site");
    let line = demo[..at].lines().count() as u32;
    let changed = format!(
        "{}strict!({}",
        &demo[..at],
        &demo[at + "forgettable!(".len()..]
    );
    std::fs::write(&file, with_helper(&changed)).unwrap();
    let out = check();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("1 classification site(s) differ from"),
        "{err}"
    );
    let expected = format!(
        "demo.rs:{}: class changed in main (`strict!` strict, locked at line {line} as `forgettable!` forgettable)",
        line + shift
    );
    assert!(err.contains(&expected), "{err}");
    assert!(err.contains("--write"), "{err}");

    // A site added to the helper: named as new.
    let added = moved.replace("    7\n}", "    let _ = fuzzy!(user: \"extra\");\n    7\n}");
    std::fs::write(&file, &added).unwrap();
    let err = String::from_utf8_lossy(&check().stderr).into_owned();
    let helper_line = demo[..anchor].lines().count() + 5;
    let expected =
        format!("demo.rs:{helper_line}: new site in helper (`fuzzy!` fuzzy), not in the lockfile");
    assert!(err.contains(&expected), "{err}");
    assert!(err.starts_with("1 classification"), "{err}");

    // A site removed: named with the line it was locked at.
    let first = demo.find("h.pin(strict!(user:").unwrap();
    let removed = demo.replacen("h.pin(strict!(user:", "h.pin(Message::user(", 1);
    assert_ne!(removed, demo);
    std::fs::write(&file, &removed).unwrap();
    let err = String::from_utf8_lossy(&check().stderr).into_owned();
    let locked_line = demo[..first].lines().count();
    assert!(
        err.contains(&format!(
            "demo.rs: site removed from main (`strict!` strict, locked at line {locked_line})"
        )),
        "{err}"
    );
}

#[test]
fn a_file_that_is_not_rust_is_an_error_naming_it() {
    let d = temp("bad");
    std::fs::write(d.join("broken.rs"), "fn main( {\n").unwrap();
    let out = sites_bin(&[d.as_os_str()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("broken.rs:") && err.contains("not valid Rust"),
        "{err}"
    );
    let out = sites_bin(&[d.join("missing").as_os_str()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
}
