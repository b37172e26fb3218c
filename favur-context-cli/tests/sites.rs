//! `favur-context sites`: the inventory of classification sites and its lockfile check.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use favur_context::Retention;
use favur_context_cli::sites::{SiteClass, scan, scan_source};

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
fn every_site_of_the_demo_is_listed_with_its_line_and_class() {
    let text = std::fs::read_to_string(Path::new(EXAMPLES).join("demo.rs")).unwrap();
    let mut expected = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for (name, class) in [
            ("strict!(", Retention::Strict),
            ("fuzzy!(", Retention::Fuzzy),
            ("forgettable!(", Retention::Forgettable),
        ] {
            for _ in line.matches(name) {
                expected.push((n as u32 + 1, class));
            }
        }
    }
    assert!(
        expected.len() > 30,
        "the demo has {} sites?",
        expected.len()
    );
    let found: Vec<(u32, Retention)> = scan(EXAMPLES.as_ref())
        .unwrap()
        .iter()
        .filter(|s| s.file == "demo.rs")
        .map(|s| match s.class {
            SiteClass::Class(c) => (s.line, c),
            other => panic!("demo site of class {other}"),
        })
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn every_form_is_found_and_lookalikes_are_not() {
    let src = r#"
use favur_context::{self, Retention};

#[retention(strict)]
struct StackTrace(String);

#[favur_context::retention(forgettable)]
enum Listing { Short(String) }

#[retention(fuzzy)]
fn record_view(history: &mut History, text: &str) {
    history.append(text);
}

struct Ls;

#[retention(forgettable)]
impl Tool for Ls {
    fn name(&self) -> &str { "ls" }
}

impl Agent {
    #[retention(strict)]
    fn note(&mut self, history: &mut History) {}

    fn step(&mut self, class: Retention) {
        self.h.append(favur_context::fuzzy!(user: "a"));
        let batch = vec![strict!(user: "b"), forgettable!(tool_result("c1"): "c")];
        assert!(self.h.append(fuzzy!(message: strict!(user: "d"))) > EntryId(0));
        self.h.append(Message::user("e").classify(class));
        self.h.append(Message::user("f").classify(Retention::Forgettable));
        self.h.append(Message::classify(Message::user("g"), self.retention_for("g")));
        // Not sites: a rules file's classify, another crate's macro, a variable.
        let d = rules.classify(&facts);
        let t = parsed.classify(classifier);
        other::strict!(user: "h");
        let strict = 3;
    }
}

mod tests {
    fn works() {
        let x = fuzzy!(user: "i");
    }
}
"#;
    let sites = scan_source("src/agent.rs", src).unwrap();
    let got: Vec<String> = sites
        .iter()
        .map(|s| format!("{}|{}|{:?}|{}|{}", s.line, s.item, s.kind, s.what, s.class))
        .collect();
    let want = [
        "4||Type|struct StackTrace|strict",
        "7||Type|enum Listing|forgettable",
        "10||Function|fn record_view|fuzzy",
        "17||Tool|impl Tool for Ls|forgettable",
        "23|<Agent>|Function|fn note|strict",
        "27|<Agent>::step|Macro|favur_context::fuzzy!|fuzzy",
        "28|<Agent>::step|Macro|strict!|strict",
        "28|<Agent>::step|Macro|forgettable!|forgettable",
        "29|<Agent>::step|Macro|fuzzy!|fuzzy",
        "29|<Agent>::step|Macro|strict!|strict",
        "30|<Agent>::step|Classify|.classify(class)|decided at run time",
        "31|<Agent>::step|Classify|.classify(Retention::Forgettable)|forgettable",
        "32|<Agent>::step|Classify|Message::classify(.., self . retention_for (\"g\"))|decided at run time",
        "43|tests::works|Macro|fuzzy!|fuzzy",
    ];
    assert_eq!(got, want);
    let ordinals: Vec<u32> = sites
        .iter()
        .filter(|s| s.item == "<Agent>::step")
        .map(|s| s.ordinal)
        .collect();
    assert_eq!(ordinals, (0..8).collect::<Vec<_>>());
}

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
