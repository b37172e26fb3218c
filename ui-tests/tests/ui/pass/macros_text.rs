#![deny(warnings)]
// Every text form of the three constructor macros: user, assistant, system; a format
// string with positional, named and captured arguments, or one `Display` expression.
use favur_context::{forgettable, fuzzy, strict, History, Retention, Role};

fn main() {
    let mut history = History::new();
    let file = "parser.rs";
    let line = 42;
    let note = String::from("from an expression");

    history.append(strict!(user: "Fix {} before {}", "the parser", "Friday"));
    history.append(strict!(assistant: "Plan: {step}", step = 1));
    history.append(strict!(system: "You are a coding agent."));
    history.append(fuzzy!(user: "{file}:{line}"));
    history.append(fuzzy!(assistant: note));
    history.append(fuzzy!(system: "trailing comma {}", 1,));
    history.append(forgettable!(user: line));
    history.append(forgettable!(assistant: "ls"));
    history.append(forgettable!(system: format!("built {}", "elsewhere")));

    let got: Vec<(Retention, Role, String)> = history
        .entries()
        .iter()
        .map(|e| (e.retention(), e.message().role, e.message().text()))
        .collect();
    assert_eq!(
        got,
        vec![
            (Retention::Strict, Role::User, "Fix the parser before Friday".into()),
            (Retention::Strict, Role::Assistant, "Plan: 1".into()),
            (Retention::Strict, Role::System, "You are a coding agent.".into()),
            (Retention::Fuzzy, Role::User, "parser.rs:42".into()),
            (Retention::Fuzzy, Role::Assistant, "from an expression".into()),
            (Retention::Fuzzy, Role::System, "trailing comma 1".into()),
            (Retention::Forgettable, Role::User, "42".into()),
            (Retention::Forgettable, Role::Assistant, "ls".into()),
            (Retention::Forgettable, Role::System, "built elsewhere".into()),
        ]
    );
}
