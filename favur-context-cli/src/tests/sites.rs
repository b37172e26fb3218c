//! `favur-context sites`: every classification site of the examples and of hand-made
//! sources found, with its line and class.

use std::path::Path;

use crate::sites::{SiteClass, scan, scan_source};
use favur_context::Retention;

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../favur-context/examples");

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
