use std::path::Path;

use favur_context::Retention::{Forgettable, Strict};

use super::command::render_table;
use super::{SiteClass, scan, scan_source};

#[test]
fn a_site_names_its_line_its_item_and_what_classifies_it() -> Result<(), super::SitesError> {
    let sites = scan_source("a.rs", "fn main() { h.append(fuzzy!(user: \"x\")); }")?;
    let s = &sites[0];
    assert_eq!(
        (s.line, s.item.as_str(), s.what.as_str()),
        (1, "main", "fuzzy!")
    );
    Ok(())
}

#[test]
fn a_file_that_does_not_parse_is_an_error_at_its_line() {
    let err = scan_source("bad.rs", "fn main( {")
        .err()
        .map(|e| e.to_string());
    assert!(err.is_some_and(|e| e.starts_with("bad.rs:1:")));
}

#[test]
fn attributes_macros_and_runtime_classes_are_sites_and_rules_calls_are_not()
-> Result<(), super::SitesError> {
    let src = r#"
#[retention(strict)]
struct Trace(String);
fn record(h: &mut History, class: Retention) {
    h.append(favur_context::forgettable!(user: "ls"));
    h.append(Message::user("x").classify(class));
    assert!(h.append(strict!(user: "y")) > EntryId(0));
    rules.classify(&facts); // a rules file's classify: not a site
}
"#;
    let sites = scan_source("src/agent.rs", src)?;
    let found: Vec<(u32, &str, SiteClass)> = sites
        .iter()
        .map(|s| (s.line, s.what.as_str(), s.class))
        .collect();
    assert_eq!(
        found,
        [
            (2, "struct Trace", SiteClass::Class(Strict)),
            (
                5,
                "favur_context::forgettable!",
                SiteClass::Class(Forgettable)
            ),
            (6, ".classify(class)", SiteClass::Runtime),
            (7, "strict!", SiteClass::Class(Strict)),
        ]
    );
    assert_eq!((sites[3].item.as_str(), sites[3].ordinal), ("record", 2));
    Ok(())
}

#[test]
fn a_tree_is_scanned_file_by_file() -> Result<(), super::SitesError> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../favur-context/examples");
    let sites = scan(Path::new(root))?;
    assert!(
        sites
            .iter()
            .any(|s| s.file == "demo.rs" && s.what == "strict!")
    );
    Ok(())
}

#[test]
fn the_table_has_a_row_per_site() -> Result<(), super::SitesError> {
    let sites = scan_source("a.rs", "fn f() { strict!(user: \"x\"); }")?;
    assert!(render_table(&sites).contains("| a.rs:1 | f | macro | `strict!` | strict |"));
    Ok(())
}

#[test]
fn the_shipped_examples_match_their_lockfile() -> Result<(), super::SitesError> {
    use clap::Parser;
    #[derive(Parser)]
    struct A {
        #[command(flatten)]
        s: super::SitesArgs,
    }
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../favur-context/examples");
    let lock = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../favur-context/examples/sites.lock.json"
    );
    let out = super::sites_command(&A::parse_from(["x", examples, "--check", lock]).s)?;
    assert!(out.success, "{}", out.stderr);
    Ok(())
}
