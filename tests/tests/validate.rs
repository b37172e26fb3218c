//! Each validator rule fails on a hand-made bad request.

use favur_context::render::validate::{
    Rule, ValidationError, validate_anthropic, validate_anthropic_strict, validate_openai,
    validate_openai_strict,
};
use serde_json::{Value, json};

fn call(id: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": "bash", "arguments": "{}"}})
}

fn openai_err(v: Value) -> ValidationError {
    validate_openai(&v).expect_err("should be invalid")
}

fn anthropic_err(v: Value) -> ValidationError {
    validate_anthropic(&v).expect_err("should be invalid")
}

fn e(index: Option<usize>, rule: Rule) -> ValidationError {
    ValidationError { index, rule }
}

type Validator = fn(&Value) -> Result<(), ValidationError>;

/// `v` ends in an assistant message (index 1) whose call `a` is in flight: the lenient
/// validator accepts it, the strict one reports the missing result.
fn assert_in_flight(v: &Value, lenient: Validator, strict: Validator) {
    lenient(v).unwrap();
    assert_eq!(
        strict(v).unwrap_err(),
        e(
            Some(1),
            Rule::MissingResult {
                call_id: "a".into()
            }
        )
    );
}

#[test]
fn openai_accepts_a_good_request_in_both_shapes() {
    let messages = json!([
        {"role": "developer", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": "ok", "tool_calls": [call("a"), call("b")]},
        {"role": "tool", "tool_call_id": "b", "content": "2"},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "assistant", "content": "done"},
    ]);
    validate_openai_strict(&messages).unwrap();
    validate_openai_strict(&json!({"model": "x", "messages": messages})).unwrap();
}

#[test]
fn openai_rules() {
    let u = json!({"role": "user", "content": "hi"});
    assert_eq!(openai_err(json!({"messages": 3})), e(None, Rule::NotAList));
    assert_eq!(openai_err(json!("x")), e(None, Rule::NotAList));
    assert_eq!(openai_err(json!([])), e(None, Rule::Empty));
    assert_eq!(openai_err(json!([u, 3])), e(Some(1), Rule::NotAnObject));
    assert_eq!(
        openai_err(json!([{"content": "x"}])),
        e(Some(0), Rule::MissingRole)
    );
    assert_eq!(
        openai_err(json!([{"role": "robot", "content": "x"}])),
        e(Some(0), Rule::UnknownRole("robot".into()))
    );
    assert!(matches!(
        openai_err(json!([{"role": "user"}])).rule,
        Rule::BadContent(_)
    ));
    assert!(matches!(
        openai_err(json!([{"role": "user", "content": 5}])).rule,
        Rule::BadContent(_)
    ));
    assert!(matches!(
        openai_err(json!([{"role": "assistant", "content": null}])).rule,
        Rule::BadContent(_)
    ));
    assert!(matches!(
        openai_err(json!([{"role": "user", "content": [{"type": "text"}]}])).rule,
        Rule::BadContent(_)
    ));
    assert!(matches!(
        openai_err(json!([{"role": "assistant", "content": null, "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]}])).rule,
        Rule::BadToolCall(_)
    ));
    assert!(matches!(
        openai_err(json!([{"role": "assistant", "content": null, "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{}"}}]}])).rule,
        Rule::BadToolCall(_)
    ));
    assert!(matches!(
        openai_err(json!([{"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function", "function": {"arguments": "{}"}}]}])).rule,
        Rule::BadToolCall(_)
    ));
    assert!(matches!(
        openai_err(json!([{"role": "assistant", "content": null, "tool_calls": []}])).rule,
        Rule::BadToolCall(_)
    ));
    assert_eq!(
        openai_err(
            json!([{"role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": {}}}]}])
        ),
        e(
            Some(0),
            Rule::ArgumentsNotString {
                call_id: "a".into()
            }
        )
    );
    assert_eq!(
        openai_err(
            json!([{"role": "assistant", "content": null, "tool_calls": [call("a"), call("a")]}])
        ),
        e(
            Some(0),
            Rule::DuplicateCallId {
                call_id: "a".into()
            }
        )
    );
    assert_eq!(
        openai_err(json!([u, {"role": "tool", "tool_call_id": "z", "content": "x"}])),
        e(
            Some(1),
            Rule::ResultWithoutCall {
                call_id: "z".into()
            }
        )
    );
    assert_eq!(
        openai_err(
            json!([{"role": "assistant", "content": null, "tool_calls": [call("a")]},
            {"role": "tool", "tool_call_id": "a", "content": "x"},
            {"role": "tool", "tool_call_id": "a", "content": "y"}])
        ),
        e(
            Some(2),
            Rule::DuplicateResult {
                call_id: "a".into()
            }
        )
    );
    assert_eq!(
        openai_err(
            json!([{"role": "assistant", "content": null, "tool_calls": [call("a"), call("b")]},
            {"role": "tool", "tool_call_id": "a", "content": "x"}, u])
        ),
        e(
            Some(0),
            Rule::MissingResult {
                call_id: "b".into()
            }
        )
    );
    assert!(matches!(
        openai_err(
            json!([{"role": "assistant", "content": null, "tool_calls": [call("a")]},
            {"role": "tool", "content": "x"}])
        )
        .rule,
        Rule::BadContent(_)
    ));
}

#[test]
fn openai_strict_reports_calls_in_flight() {
    let v = json!([{"role": "user", "content": "hi"},
        {"role": "assistant", "content": null, "tool_calls": [call("a")]}]);
    assert_in_flight(&v, validate_openai, validate_openai_strict);
}

fn tool_use(id: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "bash", "input": {}})
}

fn tool_result(id: &str) -> Value {
    json!({"type": "tool_result", "tool_use_id": id, "content": "ok"})
}

#[test]
fn anthropic_accepts_a_good_request() {
    let v = json!({"system": [{"type": "text", "text": "sys"}], "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}, tool_use("a"), tool_use("b")]},
        {"role": "user", "content": [tool_result("b"), tool_result("a"), {"type": "text", "text": "go on"}]},
        {"role": "assistant", "content": "done"},
    ]});
    validate_anthropic_strict(&v).unwrap();
    validate_anthropic_strict(&v["messages"]).unwrap();
}

#[test]
fn anthropic_rules() {
    let u = json!({"role": "user", "content": "hi"});
    let a = json!({"role": "assistant", "content": "ok"});
    let with = |m: Vec<Value>| json!({"messages": m});
    assert_eq!(
        anthropic_err(json!({"system": "x"})),
        e(None, Rule::NotAList)
    );
    assert_eq!(anthropic_err(with(vec![])), e(None, Rule::Empty));
    assert!(matches!(
        anthropic_err(json!({"system": 3, "messages": [u]})).rule,
        Rule::BadSystem(_)
    ));
    assert!(matches!(
        anthropic_err(json!({"system": [{"type": "text", "text": " "}], "messages": [u]})).rule,
        Rule::BadSystem(_)
    ));
    assert_eq!(
        anthropic_err(with(vec![json!(1)])),
        e(Some(0), Rule::NotAnObject)
    );
    assert_eq!(
        anthropic_err(with(vec![json!({"content": "x"})])),
        e(Some(0), Rule::MissingRole)
    );
    assert_eq!(
        anthropic_err(with(vec![json!({"role": "system", "content": "x"})])),
        e(Some(0), Rule::UnknownRole("system".into()))
    );
    assert_eq!(
        anthropic_err(with(vec![a.clone()])),
        e(Some(0), Rule::FirstNotUser)
    );
    assert_eq!(
        anthropic_err(with(vec![u.clone(), u.clone()])),
        e(Some(1), Rule::NotAlternating)
    );
    assert_eq!(
        anthropic_err(with(vec![json!({"role": "user", "content": " \n"})])),
        e(Some(0), Rule::EmptyText)
    );
    assert_eq!(
        anthropic_err(with(vec![
            json!({"role": "user", "content": [{"type": "text", "text": ""}]})
        ])),
        e(Some(0), Rule::EmptyText)
    );
    assert!(matches!(
        anthropic_err(with(vec![json!({"role": "user", "content": []})])).rule,
        Rule::BadContent(_)
    ));
    assert!(matches!(
        anthropic_err(with(vec![
            json!({"role": "user", "content": [{"text": "x"}]})
        ]))
        .rule,
        Rule::BadContent(_)
    ));
    assert_eq!(
        anthropic_err(with(vec![
            json!({"role": "user", "content": [tool_use("a")]})
        ])),
        e(
            Some(0),
            Rule::BlockNotAllowed {
                block: "tool_use".into(),
                role: "user".into()
            }
        )
    );
    assert_eq!(
        anthropic_err(with(vec![
            u.clone(),
            json!({"role": "assistant", "content": [tool_result("a")]})
        ])),
        e(
            Some(1),
            Rule::BlockNotAllowed {
                block: "tool_result".into(),
                role: "assistant".into()
            }
        )
    );
    assert!(matches!(
        anthropic_err(with(vec![
            u.clone(),
            json!({"role": "assistant", "content": [tool_use("a.b")]})
        ]))
        .rule,
        Rule::BadToolCall(_)
    ));
    assert!(matches!(
        anthropic_err(with(vec![u.clone(), json!({"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": "x"}]})])).rule,
        Rule::BadToolCall(_)
    ));
    assert!(matches!(
        anthropic_err(with(vec![
            u.clone(),
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": "a", "input": {}}]})
        ]))
        .rule,
        Rule::BadToolCall(_)
    ));
    assert_eq!(
        anthropic_err(with(vec![
            u.clone(),
            json!({"role": "assistant", "content": [tool_use("a")]}),
            json!({"role": "user", "content": [tool_result("a")]}),
            json!({"role": "assistant", "content": [tool_use("a")]}),
        ])),
        e(
            Some(3),
            Rule::DuplicateCallId {
                call_id: "a".into()
            }
        )
    );
    assert_eq!(
        anthropic_err(with(vec![
            json!({"role": "user", "content": [tool_result("z")]})
        ])),
        e(
            Some(0),
            Rule::ResultWithoutCall {
                call_id: "z".into()
            }
        )
    );
    assert_eq!(
        anthropic_err(with(vec![
            u.clone(),
            json!({"role": "assistant", "content": [tool_use("a")]}),
            json!({"role": "user", "content": [tool_result("a"), tool_result("a")]}),
        ])),
        e(
            Some(2),
            Rule::DuplicateResult {
                call_id: "a".into()
            }
        )
    );
    // Partly answered and the conversation goes on: `b` has no result.
    assert_eq!(
        anthropic_err(with(vec![
            u.clone(),
            json!({"role": "assistant", "content": [tool_use("a"), tool_use("b")]}),
            json!({"role": "user", "content": [tool_result("a")]}),
            json!({"role": "assistant", "content": "next"}),
        ])),
        e(
            Some(1),
            Rule::MissingResult {
                call_id: "b".into()
            }
        )
    );
    // Partly answered at the end: `b` is in flight (as for OpenAI), refused when strict.
    let partly = with(vec![
        u.clone(),
        json!({"role": "assistant", "content": [tool_use("a"), tool_use("b")]}),
        json!({"role": "user", "content": [tool_result("a")]}),
    ]);
    validate_anthropic(&partly).unwrap();
    let strict = validate_anthropic_strict(&partly).unwrap_err();
    assert_eq!(
        (strict.index, &strict.rule),
        (
            Some(1),
            &Rule::MissingResult {
                call_id: "b".into()
            }
        )
    );
    assert_eq!(
        anthropic_err(with(vec![
            u.clone(),
            json!({"role": "assistant", "content": [tool_use("a"), tool_use("b")]}),
            json!({"role": "user", "content": [tool_result("a"), {"type": "text", "text": "x"}, tool_result("b")]}),
        ])),
        e(Some(2), Rule::ResultNotFirst)
    );
    assert!(matches!(
        anthropic_err(with(vec![
            u.clone(),
            json!({"role": "assistant", "content": [tool_use("a")]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "is_error": "yes"}]}),
        ])).rule,
        Rule::BadContent(_)
    ));
}

#[test]
fn anthropic_strict_reports_calls_in_flight() {
    let v = json!({"messages": [{"role": "user", "content": "hi"},
        {"role": "assistant", "content": [tool_use("a")]}]});
    assert_in_flight(&v, validate_anthropic, validate_anthropic_strict);
}

#[test]
fn errors_name_the_index_and_the_rule() {
    let err = validate_openai(&json!([{"role": "tool", "tool_call_id": "q", "content": ""}]))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "message 0: tool result for `q` does not answer a call of the preceding assistant message"
    );
}
