//! Tools out: the registry dispatches by name and declares the tools in provider shapes.

mod common;

use std::num::NonZeroU8;

use favur_context::journal::JournaledHistory;
use favur_context::tools::{ToolDefinition, ToolDefinitionError, ToolSet, ToolSetError};
use favur_context::{History, Retention, Store, ToolCall, fuzzy, strict};
use regex::Regex;
use serde_json::{Value, json};

common::tool!(async Bash: strict, "bash", "Run a shell command",
json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
|arguments| {
    tokio::task::yield_now().await; // a real suspension point
    match arguments["command"].as_str() {
        Some("false") => Err("exit status 1".to_owned()),
        Some(c) => Ok(format!("$ {c}\nok")),
        None => Err("`command` must be a string".to_owned()),
    }
});

common::tool!(ListDir: forgettable, "list_dir", "List a directory",
    json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    |_| Ok("Cargo.toml\nsrc/".into()));

fn tools() -> ToolSet {
    ToolSet::new(Retention::Fuzzy)
        .with(Bash)
        .unwrap()
        .with_sync(ListDir)
        .unwrap()
        .with_recall(Retention::Fuzzy)
        .unwrap()
}

fn result_of(c: &favur_context::Classified) -> (String, bool, String) {
    let r = c.message().tool_results().next().unwrap();
    (r.content.clone(), r.is_error, r.call_id.clone())
}

#[tokio::test]
async fn dispatch_by_name_with_each_tools_class() {
    let tools = tools();
    let h = History::new();
    let a = tools
        .run(
            &ToolCall::new("c1", "bash", json!({"command": "cargo test"})),
            &h,
        )
        .await;
    assert_eq!(a.retention(), Retention::Strict);
    assert_eq!(
        result_of(&a),
        ("$ cargo test\nok".into(), false, "c1".into())
    );
    let b = tools
        .run(&ToolCall::new("c2", "list_dir", json!({})), &h)
        .await;
    assert_eq!(b.retention(), Retention::Forgettable);
    let c = tools
        .run(
            &ToolCall::new("c3", "bash", json!({"command": "false"})),
            &h,
        )
        .await;
    assert_eq!(result_of(&c), ("exit status 1".into(), true, "c3".into()));
    assert_eq!(c.retention(), Retention::Strict);
}

#[tokio::test]
async fn unknown_tools_and_invalid_json_are_error_results() {
    let tools = tools();
    let h = History::new();
    let unknown = tools
        .run(&ToolCall::new("c1", "rm_rf", json!({})), &h)
        .await;
    assert_eq!(
        unknown.retention(),
        Retention::Fuzzy,
        "the set's class for unrouted calls"
    );
    assert_eq!(
        result_of(&unknown),
        (
            "unknown tool `rm_rf`; the tools are: bash, list_dir, recall".into(),
            true,
            "c1".into()
        )
    );
    let bad = tools
        .run(&ToolCall::new("c2", "bash", "{\"command\": \"ls"), &h)
        .await;
    assert_eq!(bad.retention(), Retention::Strict, "the tool's own class");
    assert_eq!(
        result_of(&bad).0,
        "the arguments of this call are not valid JSON: {\"command\": \"ls"
    );
}

#[tokio::test]
async fn run_all_answers_every_call_in_order_and_appends() {
    let tools = tools();
    let mut h = History::new();
    h.append(strict!(user: "list and test"));
    let calls = vec![
        ToolCall::new("a", "list_dir", json!({})),
        ToolCall::new("b", "bash", json!({"command": "ls"})),
        ToolCall::new("c", "recall", json!({"id": 0})),
    ];
    h.append(fuzzy!(message: favur_context::Message::assistant_calls(calls.clone())));
    for answer in tools.run_all(&calls, &h).await {
        h.append(answer);
    }
    let ids: Vec<String> = h.entries()[2..]
        .iter()
        .map(|e| e.message().tool_results().next().unwrap().call_id.clone())
        .collect();
    assert_eq!(ids, ["a", "b", "c"]);
    let recalled = &h.entries()[4];
    assert_eq!(recalled.retention(), Retention::Fuzzy);
    assert!(
        recalled
            .message()
            .tool_results()
            .next()
            .unwrap()
            .content
            .ends_with("list and test")
    );
}

#[tokio::test]
async fn recall_through_the_registry_reads_a_journal() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = JournaledHistory::open(dir.path().join("h.jsonl")).unwrap();
    let old = h
        .append(fuzzy!(tool_result("c0"): "fn main() {{}}"))
        .unwrap();
    h.apply(favur_context::compact::Compaction {
        tier: NonZeroU8::new(2).unwrap(),
        edits: vec![favur_context::compact::Edit::Drop { id: old }],
        usage_after: None,
    })
    .unwrap();
    let tools = tools();
    let answer = tools
        .run(
            &ToolCall::new("r1", "recall", json!({"id": old.0})),
            h.history(),
        )
        .await;
    assert!(result_of(&answer).0.contains("fn main() {}"));
    let missing = tools
        .run(
            &ToolCall::new("r2", "recall", json!({"id": 99})),
            h.history(),
        )
        .await;
    assert!(result_of(&missing).1);
}

/// The providers' rules for a tool declaration.
fn check_openai(def: &Value) {
    let name = Regex::new("^[a-zA-Z0-9_-]{1,64}$").unwrap();
    let obj = def.as_object().unwrap();
    assert_eq!(obj.len(), 2, "{def}");
    assert_eq!(def["type"], "function");
    let f = def["function"].as_object().unwrap();
    assert!(name.is_match(f["name"].as_str().unwrap()));
    assert!(f["description"].is_string());
    assert_eq!(f["parameters"]["type"], "object");
    assert!(
        f.keys()
            .all(|k| ["name", "description", "parameters", "strict"].contains(&k.as_str()))
    );
}

fn check_anthropic(def: &Value) {
    let name = Regex::new("^[a-zA-Z0-9_-]{1,64}$").unwrap();
    let obj = def.as_object().unwrap();
    assert!(
        obj.keys()
            .all(|k| ["name", "description", "input_schema"].contains(&k.as_str()))
    );
    assert!(name.is_match(def["name"].as_str().unwrap()));
    assert_eq!(def["input_schema"]["type"], "object");
}

#[test]
fn definitions_follow_the_providers_rules() {
    let tools = tools();
    let openai = tools.openai_tools();
    let anthropic = tools.anthropic_tools();
    assert_eq!(openai.as_array().unwrap().len(), 3);
    for (o, a) in openai
        .as_array()
        .unwrap()
        .iter()
        .zip(anthropic.as_array().unwrap())
    {
        check_openai(o);
        check_anthropic(a);
        assert_eq!(o["function"]["name"], a["name"]);
        assert_eq!(o["function"]["parameters"], a["input_schema"]);
    }
    assert_eq!(
        openai[2]["function"]["parameters"]["required"],
        json!(["id"])
    );
    assert_eq!(
        tools.names().collect::<Vec<_>>(),
        ["bash", "list_dir", "recall"]
    );
}

#[test]
fn invalid_definitions_and_duplicates_are_refused() {
    for bad in ["", "read file", "ls;rm", &"x".repeat(65), "naïve"] {
        assert!(
            matches!(
                ToolDefinition::new(bad, "d", json!({"type": "object"})),
                Err(ToolDefinitionError::Name { .. })
            ),
            "{bad:?}"
        );
    }
    assert!(ToolDefinition::new("x".repeat(64), "d", json!({"type": "object"})).is_ok());
    for schema in [
        json!({}),
        json!({"type": "string"}),
        json!("object"),
        Value::Null,
    ] {
        assert!(matches!(
            ToolDefinition::new("ok", "d", schema),
            Err(ToolDefinitionError::Schema { .. })
        ));
    }
    let err = ToolSet::new(Retention::Fuzzy)
        .with(Bash)
        .unwrap()
        .with(Bash)
        .unwrap_err();
    assert_eq!(err, ToolSetError::Duplicate("bash".into()));
}

#[test]
fn the_whole_request_is_budgeted() {
    use favur_context::tokens::HeuristicCounter;
    use favur_context::{Compactor, Policy};
    let tools = tools();
    let definitions = tools.definitions_tokens(&HeuristicCounter);
    // What is counted is the `tools` array as sent.
    assert_eq!(
        definitions,
        u64::from(favur_context::tokens::TokenCounter::count_text(
            &HeuristicCounter,
            &tools.openai_tools().to_string()
        ))
    );
    let mut h = History::new();
    h.append(strict!(user: "{}", "word ".repeat(40)));
    let messages = h.usage_tokens();
    let window = (messages + definitions) * 20; // tier 1 at 5%: messages + tools reach it
    let plain = Compactor::new(Policy::for_window(window).unwrap());
    assert_eq!(plain.due(&h), None, "the messages alone are under tier 1");
    h.set_request_overhead_tokens(definitions);
    assert_eq!(h.usage_tokens(), messages + definitions);
    assert_eq!(
        plain.due(&h),
        Some(NonZeroU8::MIN),
        "with the tools array counted, tier 1 is due"
    );

    // The reserve for the answer counts toward the tiers and the limit too.
    let mut h = History::new();
    h.append(strict!(user: "{}", "word ".repeat(40)));
    let usage = h.usage_tokens();
    let window = (usage + 100) * 20;
    let policy = Policy::builder().window_tokens(window).build().unwrap();
    assert_eq!(Compactor::new(policy).due(&h), None);
    let reserved = Policy::builder()
        .window_tokens(window)
        .reserve_output_tokens(100)
        .build()
        .unwrap();
    assert_eq!(Compactor::new(reserved.clone()).due(&h), NonZeroU8::new(1));
    assert_eq!(
        reserved.limit_tokens(),
        Policy::for_window(window).unwrap().limit_tokens() - 100
    );
}

/// With a per-entry cap, the model can still read an original longer than the cap: the
/// recall answers come in parts under the cap, each naming the next, none cut by the cap.
#[tokio::test]
async fn recall_pages_through_an_original_longer_than_the_cap() {
    use favur_context::render::Form;
    use favur_context::tools::RecallTool;
    use favur_context::{Compactor, Policy};
    let cap = 300;
    let policy = Policy::builder()
        .window_tokens(1_000_000)
        .entry_cap_tokens(Some(cap))
        .build()
        .unwrap();
    let tools = ToolSet::new(Retention::Fuzzy)
        .with_recall_paged(Retention::Fuzzy, cap)
        .unwrap();
    let mut h = History::new();
    h.append(strict!(user: "read the log"));
    let log: String = (0..600)
        .map(|i| {
            format!(
                "2024-05-01 12:00:{:02} worker-{} step {i} ok\n",
                i % 60,
                i % 7
            )
        })
        .collect();
    let original = h.append(strict!(tool_result("c1"): "{log}"));
    assert!(h.recall(original).unwrap().tokens() > 10 * cap);
    let mut compactor = Compactor::new(policy);
    compactor
        .compact_at(&mut h, NonZeroU8::MIN)
        .expect("in memory");
    let item = h.view().items().iter().find(|i| i.id == original).unwrap();
    assert!(
        matches!(item.form, Form::Capped(_)),
        "the cap applies to the original"
    );

    let full = RecallTool.render(&h.recall(original).unwrap());
    let mut text = String::new();
    let mut page = 1;
    let pages = loop {
        let call = ToolCall::new(
            format!("r{page}"),
            "recall",
            json!({"id": original.0, "page": page}),
        );
        let answer = tools.run(&call, &h).await;
        let (content, is_error, _) = result_of(&answer);
        assert!(!is_error, "{content}");
        let (header, body) = content.split_once('\n').unwrap();
        assert!(
            header.starts_with(&format!("entry {original} (tool, strict), part {page} of ")),
            "{header}"
        );
        assert!(
            !header.contains(&format!("entry {}", h.next_id())),
            "never points at itself"
        );
        text.push_str(body);
        let id = h.append(answer);
        assert!(
            h.recall(id).unwrap().tokens() <= cap,
            "each part fits the cap"
        );
        if header.contains("the last part") {
            break page;
        }
        assert!(header.contains(&format!(
            "{{\"id\": {}, \"page\": {}}}",
            original.0,
            page + 1
        )));
        page += 1;
    };
    assert!(pages > 5);
    assert_eq!(text, full, "the parts put together are the original");
    // The answers are under the cap: compaction does not cut them.
    compactor
        .compact_at(&mut h, NonZeroU8::MIN)
        .expect("in memory");
    let capped_answers = h
        .view()
        .items()
        .iter()
        .filter(|i| i.id > original && matches!(i.form, Form::Capped(_)))
        .count();
    assert_eq!(capped_answers, 0);
    // A page past the end is an error result saying how many there are.
    let past = tools
        .run(
            &ToolCall::new("rx", "recall", json!({"id": original.0, "page": pages + 1})),
            &h,
        )
        .await;
    let (content, is_error, _) = result_of(&past);
    assert!(is_error);
    assert!(content.contains(&format!("has {pages} pages")), "{content}");
}
