//! Histories built through every way of classifying a message, snapshotted with the
//! recorded call sites (file, line, column of this file: stable, nothing is redacted).

mod common;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use favur_context::message::kinds::{Directive, ProgressNote};
use favur_context::{
    History, Message, Retention, Role, ToolCall, forgettable, fuzzy, retention, strict,
};
use serde_json::json;

#[test]
fn constructor_macros() {
    let mut h = common::history();
    let path = "src/lexer.rs";
    let code = 101;
    h.append(strict!(system: "You are a coding agent working in {}.", "favur"));
    h.append(strict!(user: "Fix the failing test in {path}"));
    h.append(fuzzy!(assistant: "I will read {} first", path));
    h.append(forgettable!(tool_call: "call_1", "list_dir", json!({"path": "src"})));
    h.append(forgettable!(tool_result("call_1"): "lexer.rs\nparser.rs"));
    h.append(fuzzy!(tool_calls: [
        ("call_2", "read", json!({"path": path})),
        ("call_3", "bash", r#"{"command": "cargo test"#),
    ]));
    h.append(fuzzy!(tool_result("call_2"): "fn lex() {{}}"));
    h.append(strict!(tool_error("call_3"): "exit status {code}"));
    h.append(forgettable!(message: Message::user("from an existing message")));
    h.append(fuzzy!(user: path));

    let e = h.entries();
    let classes: Vec<Retention> = e.iter().map(|e| e.retention()).collect();
    use Retention::{Forgettable as Fo, Fuzzy as Fu, Strict as St};
    assert_eq!(classes, [St, St, Fu, Fo, Fo, Fu, Fu, St, Fo, Fu]);
    // Every site is the line of its macro invocation in this file, at the macro's column.
    assert!(
        e.iter()
            .all(|e| e.site().file() == "tests/tests/classify.rs")
    );
    assert_eq!(e[0].site().line(), 21);
    assert_eq!(e[0].site().column(), 14);
    assert_eq!(e[5].site().line(), 26);
    assert!(e[7].message().tool_results().next().unwrap().is_error);
    insta::assert_yaml_snapshot!(e);
}

#[test]
fn site_is_the_invocation_line() {
    let mut h = History::new();
    let line = line!();
    let made_early = strict!(user: "classified here");
    let _ = History::new();
    h.append(made_early);
    // The site is where the class was chosen, not where the value was appended.
    assert_eq!(h.entries()[0].site().line(), line + 1);
    assert_eq!(h.entries()[0].site().file(), file!());
}

#[retention(forgettable)]
struct Listing {
    dir: &'static str,
    files: Vec<&'static str>,
}

impl From<Listing> for Message {
    fn from(l: Listing) -> Message {
        Message::tool_result(format!("ls {}", l.dir), l.files.join("\n"), false)
    }
}

#[retention(fuzzy)]
enum Step {
    Thought(String),
    Observation { text: String },
}

impl From<Step> for Message {
    fn from(s: Step) -> Message {
        match s {
            Step::Thought(t) => Message::assistant(t),
            Step::Observation { text } => Message::user(text),
        }
    }
}

#[retention(strict)]
struct Failure<E> {
    error: E,
}

impl<E: std::fmt::Display> From<Failure<E>> for Message {
    fn from(f: Failure<E>) -> Message {
        Message::user(format!("FAILED: {}", f.error))
    }
}

#[test]
fn type_attribute_and_ready_made_kinds() {
    let mut h = common::history();
    h.append(Listing {
        dir: "src",
        files: vec!["lib.rs", "main.rs"],
    });
    h.append(Step::Thought("the lexer drops the last token".into()));
    h.append(Step::Observation {
        text: "1 test failed".into(),
    });
    h.append(Failure {
        error: "assertion failed: tokens.len() == 3",
    });
    h.append(Directive::new("do not change the public API"));
    h.append(ProgressNote::new("reproduced the failure (step 1 of 3)"));

    let e = h.entries();
    let classes: Vec<Retention> = e.iter().map(|e| e.retention()).collect();
    use Retention::{Forgettable as Fo, Fuzzy as Fu, Strict as St};
    assert_eq!(classes, [Fo, Fu, Fu, St, St, St]);
    // Classified by type: the site is the `append` call (column of `append`).
    assert_eq!((e[0].site().line(), e[0].site().column()), (104, 7));
    assert_eq!(e[4].message().role, Role::User);
    assert_eq!(e[4].message().extensions["favur_kind"], "directive");
    assert_eq!(e[5].message().role, Role::Assistant);
    insta::assert_yaml_snapshot!(e);
}

#[retention(forgettable)]
fn record_search(history: &mut History, hits: &[&str]) {
    history.append(hits.join("\n"));
}

#[retention(fuzzy)]
fn record_view<P: AsRef<str>>(history: &mut favur_context::History, path: P, text: &str) {
    history.append(format!("{}:\n{text}", path.as_ref()));
    // A value with a class of its own keeps it inside the function.
    history.append(ProgressNote::new("viewed the lexer"));
}

#[retention(strict)]
async fn record_trace(history: &mut History, trace: String) {
    std::future::ready(()).await;
    history.append(Message::user(trace));
}

struct Agent {
    step: u32,
}

impl Agent {
    #[retention(fuzzy)]
    fn think(&mut self, history: &mut History, thought: &str) {
        self.step += 1;
        history.append(format!("step {}: {thought}", self.step));
    }
}

fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

#[test]
fn function_attribute() {
    let mut h = common::history();
    record_search(
        &mut h,
        &["src/lexer.rs:12: fn lex", "src/parser.rs:40: lex("],
    );
    record_view(&mut h, "src/lexer.rs", "fn lex() {}");
    block_on(record_trace(
        &mut h,
        "thread 'main' panicked at src/lexer.rs:14".into(),
    ));
    Agent { step: 0 }.think(&mut h, "the off-by-one is in lex");

    let e = h.entries();
    let classes: Vec<Retention> = e.iter().map(|e| e.retention()).collect();
    use Retention::{Forgettable as Fo, Fuzzy as Fu, Strict as St};
    assert_eq!(classes, [Fo, Fu, St, St, Fu]);
    // The site of each entry is the `append` line inside the function body.
    let lines: Vec<u32> = e.iter().map(|e| e.site().line()).collect();
    assert_eq!(lines, [132, 137, 139, 145, 156]);
    insta::assert_yaml_snapshot!(e);
}

common::tool!(Grep: forgettable, "grep", "Search the files", json!({"type": "object", "properties": {"pattern": {"type": "string"}}}), |arguments| {
    match arguments["pattern"].as_str() {
        Some(p) => Ok(format!("src/lexer.rs:12: {p}")),
        None => Err("missing `pattern`".into()),
    }
});
common::tool!(Test: strict, "test", "Run the tests", json!({}), |_| Err("test lexer::last_token ... FAILED".into()));

#[test]
fn tool_attribute() {
    let mut h = common::history();
    h.run_tool(
        &Grep,
        &ToolCall::new("c1", "grep", json!({"pattern": "fn lex"})),
    );
    h.run_tool(&Grep, &ToolCall::new("c2", "grep", json!({})));
    h.run_tool(&Grep, &ToolCall::new("c3", "grep", "{\"pattern\": "));
    h.run_tool(&Test, &ToolCall::new("c4", "test", json!({})));
    h.append_tool_result(&Test, "c5", Ok("test result: ok".into()));

    let e = h.entries();
    let classes: Vec<Retention> = e.iter().map(|e| e.retention()).collect();
    use Retention::{Forgettable as Fo, Strict as St};
    assert_eq!(classes, [Fo, Fo, Fo, St, St]);
    let errors: Vec<bool> = e
        .iter()
        .map(|e| e.message().tool_results().next().unwrap().is_error)
        .collect();
    assert_eq!(errors, [false, true, true, true, false]);
    insta::assert_yaml_snapshot!(e);
}

#[test]
fn runtime_classification() {
    let mut h = common::history();
    // A data-driven path (an importer, a config table) names the class at run time.
    let table = [
        ("ls", Retention::Forgettable),
        ("cat", Retention::Fuzzy),
        ("pytest", Retention::Strict),
    ];
    for (tool, class) in table {
        h.append(Message::tool_result(tool, format!("output of {tool}"), false).classify(class));
    }
    let classes: Vec<Retention> = h.entries().iter().map(|e| e.retention()).collect();
    assert_eq!(classes, Retention::ALL);
    assert!(h.entries().iter().all(|e| e.site().line() == 236));
    insta::assert_yaml_snapshot!(h.entries());
}
