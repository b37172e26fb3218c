#![deny(warnings)]
// The tool forms: tool_result, tool_error, tool_call, tool_calls (a literal list or any
// expression of `ToolCall`s), and message: expr.
use favur_context::message::Arguments;
use favur_context::{forgettable, fuzzy, strict, History, Message, Retention, Role, ToolCall};

use serde_json::json;

fn main() {
    let mut history = History::new();
    let id = String::from("call_2");
    let code = 1;

    history.append(forgettable!(tool_call: "call_1", "list_dir", json!({"path": "src"})));
    history.append(forgettable!(tool_result("call_1"): "main.rs\nlib.rs"));
    history.append(strict!(tool_call: id.clone(), String::from("bash"), r#"{"command":"cargo test"}"#));
    history.append(strict!(tool_error(&id): "exit status {code}"));
    history.append(fuzzy!(tool_calls: [
        ("c3", "read", json!({"path": "a.rs"})),
        ("c4", "read", String::from("{not json")),
    ]));
    history.append(fuzzy!(tool_result("c3"): "fn a() {{}}"));
    history.append(fuzzy!(message: Message::user("an existing message")));
    history.append(strict!(message: Message::assistant_calls([ToolCall::new("c5", "x", json!(null))])));
    // `tool_calls:` with an expression: the calls a parsed provider reply carries, a `Vec`,
    // an array of `ToolCall` values, an iterator.
    let reply: Vec<ToolCall> = vec![
        ToolCall::new("c6", "read", json!({"path": "b.rs"})),
        ToolCall::new("c7", "bash", r#"{"command":"ls"}"#),
    ];
    history.append(fuzzy!(tool_calls: reply.clone()));
    let (a, b) = (ToolCall::new("c8", "ls", json!({})), ToolCall::new("c9", "ls", json!({})));
    history.append(forgettable!(tool_calls: [a, b]));
    history.append(strict!(tool_calls: reply.iter().filter(|c| c.name == "bash").cloned()));

    let e = history.entries();
    assert_eq!(e.len(), 11);
    assert_eq!(e[0].retention(), Retention::Forgettable);
    assert_eq!(e[0].message().role, Role::Assistant);
    let call = e[0].message().tool_calls().next().unwrap();
    assert_eq!((call.id.as_str(), call.name.as_str()), ("call_1", "list_dir"));
    assert_eq!(call.arguments, Arguments::Json(json!({"path": "src"})));

    let result = e[1].message().tool_results().next().unwrap();
    assert_eq!(e[1].message().role, Role::Tool);
    assert_eq!((result.call_id.as_str(), result.is_error), ("call_1", false));

    assert!(e[2].message().tool_calls().next().unwrap().arguments.as_json().is_some());
    let error = e[3].message().tool_results().next().unwrap();
    assert_eq!((error.call_id.as_str(), error.content.as_str(), error.is_error), ("call_2", "exit status 1", true));

    let calls: Vec<_> = e[4].message().tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].arguments, Arguments::Invalid("{not json".into()));
    assert_eq!(e[5].message().tool_results().next().unwrap().content, "fn a() {}");
    assert_eq!((e[6].retention(), e[6].message().text()), (Retention::Fuzzy, "an existing message".into()));
    assert_eq!(e[7].retention(), Retention::Strict);

    let ids = |i: usize| -> Vec<String> { e[i].message().tool_calls().map(|c| c.id.clone()).collect() };
    assert_eq!((e[8].retention(), e[8].message().role), (Retention::Fuzzy, Role::Assistant));
    assert_eq!(ids(8), ["c6", "c7"]);
    assert_eq!(e[8].message().tool_calls().next().unwrap().arguments, Arguments::Json(json!({"path": "b.rs"})));
    assert_eq!((e[9].retention(), ids(9)), (Retention::Forgettable, vec!["c8".to_owned(), "c9".to_owned()]));
    assert_eq!((e[10].retention(), ids(10)), (Retention::Strict, vec!["c7".to_owned()]));
}
