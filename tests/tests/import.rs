//! Import of each format with a classifier, the round trips, the indexed errors and
//! all-or-nothing behaviour.

use favur_context::import::shell::ShellCommandClassifier;
use favur_context::import::{
    self, Classifier, Decision, Format, ImportError, IncomingMessage, Unclassified, parse,
};
use favur_context::render::validate::{validate_anthropic_strict, validate_openai_strict};
use favur_context::render::{render_anthropic, render_openai};
use favur_context::{History, Retention, Role, strict};
use serde_json::{Value, json};

fn strict_all(_: &IncomingMessage<'_>) -> Retention {
    Retention::Strict
}

fn openai_doc() -> Value {
    json!([
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the test.", "name": "ana"},
        {"role": "assistant", "content": "Looking.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls src\"}"}},
            {"id": "c2", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"python -m pytest -x\"}"}}
        ]},
        {"role": "tool", "tool_call_id": "c2", "content": "1 failed"},
        {"role": "tool", "tool_call_id": "c1", "content": "lib.py"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c3", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"sed -n '1,20p' src/lib.py\"}"}}
        ]},
        {"role": "tool", "tool_call_id": "c3", "content": "def f(): ..."},
        {"role": "assistant", "content": "Fixed."}
    ])
}

#[test]
fn openai_import_round_trips_and_the_classifier_sees_commands() {
    let doc = openai_doc();
    let mut h = History::new();
    let report = import::import(
        &mut h,
        Format::OpenAi,
        &doc.to_string(),
        &ShellCommandClassifier,
    )
    .unwrap();
    assert_eq!(report.ids.len(), 8);
    assert_eq!(h.pinned().len(), 1);
    let classes: Vec<Retention> = h.entries().iter().map(|e| e.retention()).collect();
    use Retention::*;
    assert_eq!(
        classes,
        [
            Strict,
            Strict,
            Fuzzy,
            Strict,
            Forgettable,
            Fuzzy,
            Strict,
            Fuzzy
        ]
    );
    assert_eq!(h.entries()[4].site().file(), "import:openai/listing");
    assert_eq!(h.entries()[4].site().line(), 4);
    // Round trip: the results come back in call order (c1 before c2), the only change.
    let rendered = render_openai(&h);
    let mut expected = doc.clone();
    let arr = expected.as_array_mut().unwrap();
    arr.swap(3, 4);
    assert_eq!(rendered, expected);
    validate_openai_strict(&rendered).unwrap();
}

#[test]
fn openai_normalisation_is_the_documented_one() {
    let doc = json!([
        {"role": "developer", "content": [{"type": "text", "text": "a"}]},
        {"role": "user", "content": [{"type": "text", "text": "b"}, {"type": "text", "text": "c"}]},
        {"role": "assistant", "tool_calls": [{"id": "x", "type": "function", "function": {"name": "f", "arguments": "{ \"k\" : 1 }"}}]},
        {"role": "tool", "tool_call_id": "x", "content": [{"type": "text", "text": "d"}, {"type": "text", "text": "e"}]}
    ]);
    let mut h = History::new();
    import::import(&mut h, Format::OpenAi, &doc.to_string(), &strict_all).unwrap();
    assert_eq!(
        render_openai(&h),
        json!([
            {"role": "system", "content": "a"},
            {"role": "user", "content": [{"type": "text", "text": "b"}, {"type": "text", "text": "c"}]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "x", "type": "function", "function": {"name": "f", "arguments": "{\"k\":1}"}}]},
            {"role": "tool", "tool_call_id": "x", "content": "d\ne"}
        ])
    );
}

#[test]
fn anthropic_import_round_trips() {
    let doc = json!({
        "system": [{"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Fix the test."}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}},
                {"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {"command": "pytest"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "src"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "1 failed", "is_error": true},
                {"type": "text", "text": "Please hurry."}
            ]},
            {"role": "assistant", "content": [{"type": "text", "text": "Fixed."}]}
        ]
    });
    let t = parse(Format::Anthropic, &doc.to_string()).unwrap();
    // The user turn is split: one entry per result, one for the text.
    assert_eq!(t.messages().len(), 7);
    assert_eq!(t.messages()[3].block, Some(0));
    assert_eq!(t.messages()[5].block, Some(2));
    let seen: Vec<Option<String>> = (0..t.messages().len())
        .map(|i| t.incoming(i).unwrap().command().map(str::to_owned))
        .collect();
    assert_eq!(seen[4].as_deref(), Some("pytest"));
    let mut h = History::new();
    t.import_into(&mut h, &ShellCommandClassifier).unwrap();
    assert_eq!(h.entries()[3].retention(), Retention::Forgettable);
    assert_eq!(h.entries()[4].retention(), Retention::Strict);
    let rendered = render_anthropic(&h).to_value();
    assert_eq!(rendered, doc);
    validate_anthropic_strict(&rendered).unwrap();
}

#[test]
fn anthropic_string_content_and_system_are_normalised_to_blocks() {
    let doc = json!({"system": "sys", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]}
    ]});
    let mut h = History::new();
    import::import(&mut h, Format::Anthropic, &doc.to_string(), &strict_all).unwrap();
    assert_eq!(
        render_anthropic(&h).to_value(),
        json!({"system": [{"type": "text", "text": "sys"}], "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "a\nb"}]}
        ]})
    );
}

fn plain_run() -> Value {
    json!({"instance_id": "x", "messages": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "<pr_description>Fix it</pr_description>"},
        {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nfind . -name '*.py' | head\n```", "prompt_tokens": 100},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n./a.py\n</output>"},
        {"role": "assistant", "content": "THOUGHT: view\n\n```bash\nnl -ba a.py | sed -n '1,5p'\n```", "prompt_tokens": 150},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n1 x = 1\n</output>"},
        {"role": "assistant", "content": "THOUGHT: two blocks\n```bash\nls\n```\n```bash\nls\n```"},
        {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks."},
        {"role": "assistant", "content": "THOUGHT: done\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff\n```"},
        {"role": "user", "content": "diff --git a/a.py b/a.py"}
    ]})
}

#[test]
fn mini_swe_agent_plain_chat_import_exposes_actions_and_observations() {
    let doc = plain_run();
    let t = parse(Format::MiniSweAgent, &doc.to_string()).unwrap();
    let inc = |i: usize| t.incoming(i).unwrap();
    assert!(t.messages()[0].pin);
    assert!(!inc(1).is_result());
    assert_eq!(inc(2).command(), Some("find . -name '*.py' | head"));
    assert_eq!(t.messages()[2].prompt_tokens, Some(100));
    assert!(inc(3).is_result());
    assert_eq!(inc(3).command(), Some("find . -name '*.py' | head"));
    assert_eq!(inc(3).returncode(), Some(0));
    assert_eq!(inc(6).command(), None, "two blocks are not an action");
    assert!(inc(7).is_result());
    let mut h = History::new();
    t.import_into(&mut h, &ShellCommandClassifier).unwrap();
    let rules: Vec<&str> = h.entries().iter().map(|e| e.site().file()).collect();
    assert_eq!(
        rules,
        [
            "import:mini-swe-agent/system",
            "import:mini-swe-agent/task",
            "import:mini-swe-agent/assistant",
            "import:mini-swe-agent/listing",
            "import:mini-swe-agent/assistant",
            "import:mini-swe-agent/file-view",
            "import:mini-swe-agent/assistant",
            "import:mini-swe-agent/other",
            "import:mini-swe-agent/assistant",
            "import:mini-swe-agent/other",
        ]
    );
    // Round trip: the plain {role, content} messages come back unchanged.
    let expected: Vec<Value> = doc["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| json!({"role": m["role"], "content": m["content"]}))
        .collect();
    assert_eq!(render_openai(&h), Value::Array(expected));
}

#[test]
fn mini_swe_agent_tool_calling_import_and_exit_record() {
    let doc = json!({"messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "name": "bash", "arguments": "{\"command\": \"pytest -q\"}"}], "prompt_tokens": 10},
        {"role": "tool", "content": "<returncode>1</returncode><output>F</output>", "tool_call_id": "call_1"},
        {"role": "assistant", "content": "submit", "tool_calls": [{"id": "call_2", "name": "bash", "arguments": "{\"command\": \"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\"}"}]},
        {"role": "exit", "content": "the patch"}
    ]});
    let t = parse(Format::MiniSweAgent, &doc.to_string()).unwrap();
    assert_eq!(t.exit(), Some("the patch"));
    assert_eq!(t.messages().len(), 5);
    let result = t.incoming(3).unwrap();
    assert_eq!(
        (result.role(), result.command(), result.returncode()),
        (Role::Tool, Some("pytest -q"), Some(1))
    );
    let mut h = History::new();
    let report = t.import_into(&mut h, &ShellCommandClassifier).unwrap();
    assert_eq!(report.exit.as_deref(), Some("the patch"));
    assert_eq!(h.entries()[3].retention(), Retention::Strict);
    // The last call is in flight (its output went into the exit record).
    let rendered = render_openai(&h);
    assert_eq!(rendered.as_array().unwrap().len(), 5);
    assert_eq!(rendered[2]["content"], "");
    assert_eq!(
        rendered[2]["tool_calls"][0]["function"]["arguments"],
        "{\"command\":\"pytest -q\"}"
    );
    assert!(validate_openai_strict(&rendered).is_err());
}

fn err(format: Format, doc: Value) -> ImportError {
    parse(format, &doc.to_string()).expect_err("malformed input must be rejected")
}

fn msg(index: usize, problem: &str) -> ImportError {
    ImportError::Message {
        index,
        problem: problem.into(),
    }
}

#[test]
fn malformed_openai_input_names_the_index_and_the_problem() {
    let u = json!({"role": "user", "content": "hi"});
    let call = |args: Value| {
        json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": args}}]})
    };
    assert!(matches!(
        parse(Format::OpenAi, "[{"),
        Err(ImportError::Json(_))
    ));
    assert!(matches!(
        err(Format::OpenAi, json!({"x": 1})),
        ImportError::Shape(_)
    ));
    assert_eq!(
        err(Format::OpenAi, json!([u, {"content": "x"}])),
        msg(1, "missing `role`")
    );
    assert_eq!(
        err(Format::OpenAi, json!([u, 7])),
        msg(1, "a message must be a JSON object")
    );
    assert_eq!(
        err(Format::OpenAi, json!([{"role": "robot", "content": ""}])),
        msg(0, "unknown role `robot`")
    );
    assert_eq!(
        err(Format::OpenAi, json!([{"role": "user"}])),
        msg(0, "missing `content`")
    );
    assert_eq!(
        err(
            Format::OpenAi,
            json!([u, {"role": "tool", "tool_call_id": "zz", "content": "x"}])
        ),
        ImportError::UnknownCall {
            index: 1,
            call_id: "zz".into()
        }
    );
    assert_eq!(
        err(
            Format::OpenAi,
            json!([call(json!("{}")), {"role": "tool", "tool_call_id": "c1", "content": "x"},
            {"role": "tool", "tool_call_id": "c1", "content": "y"}])
        ),
        ImportError::DuplicateResult {
            index: 2,
            call_id: "c1".into()
        }
    );
    assert_eq!(
        err(Format::OpenAi, json!([u, call(json!({"a": 1}))])),
        ImportError::ArgumentsNotString {
            index: 1,
            call_id: "c1".into()
        }
    );
    assert!(matches!(
        err(Format::OpenAi, json!([u, call(json!("{nope"))])),
        ImportError::InvalidArguments { index: 1, .. }
    ));
    assert_eq!(
        err(
            Format::OpenAi,
            json!([call(json!("{}")), {"role": "tool", "content": "x"}])
        ),
        msg(1, "missing `tool_call_id`")
    );
    assert_eq!(
        err(
            Format::OpenAi,
            json!([{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}])
        ),
        // Images are imported now (issue 13); one without a URL is malformed.
        msg(0, "content part 0 has no `image_url.url`")
    );
    assert_eq!(
        err(
            Format::OpenAi,
            json!([{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}])
        ),
        msg(
            0,
            "content part 0 has type `input_audio`, which is not supported (text, image_url, file)"
        )
    );
    assert_eq!(
        err(
            Format::OpenAi,
            json!([{"role": "assistant", "content": null, "tool_calls": [{"type": "function"}]}])
        ),
        msg(0, "tool call 0 has no `id` string")
    );
}

#[test]
fn malformed_anthropic_and_mini_swe_agent_input_names_the_index() {
    let u = json!({"role": "user", "content": "hi"});
    assert_eq!(
        err(
            Format::Anthropic,
            json!({"messages": [u, {"role": "system", "content": "x"}]})
        ),
        msg(
            1,
            "role `system` is not allowed in messages (use the `system` parameter)"
        )
    );
    assert_eq!(
        err(
            Format::Anthropic,
            json!({"messages": [{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]}]})
        ),
        msg(0, "a `tool_use` block is not allowed in a user message")
    );
    assert_eq!(
        err(
            Format::Anthropic,
            json!({"messages": [u, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "q"}]}]})
        ),
        ImportError::UnknownCall {
            index: 1,
            call_id: "q".into()
        }
    );
    assert_eq!(
        err(
            Format::Anthropic,
            json!({"messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]})
        ),
        // Images are imported now (issue 13); one without a source type is malformed.
        msg(
            0,
            "image block 0: source has no `type` (base64, url or file)"
        )
    );
    assert_eq!(
        err(
            Format::Anthropic,
            json!({"messages": [{"role": "user", "content": [{"type": "search_result", "source": {}}]}]})
        ),
        msg(
            0,
            "content block 0 of type `search_result` is not supported"
        )
    );
    assert!(matches!(
        err(Format::Anthropic, json!({"system": 3, "messages": []})),
        ImportError::Shape(_)
    ));
    assert_eq!(
        err(
            Format::MiniSweAgent,
            json!({"messages": [u, {"role": "exit", "content": "p"}, u]})
        ),
        msg(2, "message after the `exit` record")
    );
    assert_eq!(
        err(
            Format::MiniSweAgent,
            json!({"messages": [u, {"role": "assistant", "content": "x", "tool_calls": [{"id": "c", "name": "bash", "arguments": {"command": "ls"}}]}]})
        ),
        ImportError::ArgumentsNotString {
            index: 1,
            call_id: "c".into()
        }
    );
    assert_eq!(
        err(
            Format::MiniSweAgent,
            json!({"messages": [u, {"role": "assistant", "content": "x", "prompt_tokens": "many"}]})
        ),
        msg(1, "`prompt_tokens` is not a non-negative integer")
    );
}

fn snapshot(h: &History) -> String {
    serde_json::to_string(h).unwrap()
}

#[test]
fn a_failed_import_leaves_the_history_unchanged() {
    let mut h = History::new();
    h.append(strict!(user: "earlier work"));
    let before = snapshot(&h);
    // Malformed at the very last message.
    let mut doc = openai_doc();
    doc.as_array_mut()
        .unwrap()
        .push(json!({"role": "tool", "tool_call_id": "nope", "content": ""}));
    let e = import::import(&mut h, Format::OpenAi, &doc.to_string(), &strict_all).unwrap_err();
    assert_eq!(
        e,
        ImportError::UnknownCall {
            index: 8,
            call_id: "nope".into()
        }
    );
    assert_eq!(snapshot(&h), before);

    // A classifier that declines some messages: every one is listed, nothing recorded.
    struct OnlyTools;
    impl Classifier for OnlyTools {
        fn classify(&self, m: &IncomingMessage<'_>) -> Result<Decision, Unclassified> {
            if m.is_result() {
                Ok(Retention::Forgettable.into())
            } else {
                Err(Unclassified(format!("no rule for {}", m.role())))
            }
        }
    }
    let e = import::import(
        &mut h,
        Format::OpenAi,
        &openai_doc().to_string(),
        &OnlyTools,
    )
    .unwrap_err();
    let ImportError::Unclassified { unclassified } = e else {
        panic!("expected the unclassified list, got {e}");
    };
    let indices: Vec<usize> = unclassified.iter().map(|(i, _)| *i).collect();
    assert_eq!(indices, [0, 1, 2, 5, 7]);
    assert_eq!(snapshot(&h), before);

    // And a good import after that appends after the earlier entry.
    import::import(
        &mut h,
        Format::OpenAi,
        &openai_doc().to_string(),
        &strict_all,
    )
    .unwrap();
    assert_eq!(h.len(), 9);
}

#[test]
fn invalid_arguments_can_be_kept_on_request() {
    let doc = json!([{"role": "assistant", "content": null, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{oops"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "bad arguments"}]);
    let t = import::parse_with(
        Format::OpenAi,
        &doc.to_string(),
        import::ParseOptions {
            keep_invalid_arguments: true,
        },
    )
    .unwrap();
    let mut h = History::new();
    t.import_into(&mut h, &strict_all).unwrap();
    assert_eq!(
        render_openai(&h)[1]["tool_calls"][0]["function"]["arguments"],
        "{oops"
    );
}

#[test]
fn shell_command_classes() {
    use Retention::*;
    let cases = [
        ("ls -la", Forgettable, "listing"),
        ("cd /testbed && find . -name '*.py'", Forgettable, "listing"),
        ("grep -rn 'def f' src | head -20", Forgettable, "listing"),
        ("git status && git log --oneline -5", Forgettable, "listing"),
        ("tree -L 2", Forgettable, "listing"),
        (
            "python -m pytest tests/test_a.py -x 2>&1 | tail -30",
            Strict,
            "run",
        ),
        ("cd /testbed && python reproduce.py", Strict, "run"),
        ("timeout 60 ./tests/runtests.py model_fields", Strict, "run"),
        ("cargo test -p x", Strict, "run"),
        ("tox -e py39", Strict, "run"),
        ("make test", Strict, "run"),
        ("cat src/a.py", Strict, "file-view"),
        ("sed -n '100,150p' src/a.py", Strict, "file-view"),
        ("nl -ba src/a.py | sed -n '10,20p'", Strict, "file-view"),
        ("head -50 setup.py", Strict, "file-view"),
        ("sed -i 's/a/b/' src/a.py", Fuzzy, "other"),
        ("cat <<'EOF' > test.py\nimport os\nls\nEOF", Fuzzy, "other"),
        ("git diff", Fuzzy, "other"),
        ("pip install -e .", Fuzzy, "other"),
        ("ls && python x.py", Strict, "run"),
        ("echo 'a && ls'", Fuzzy, "other"),
        ("FOO=1 pytest", Strict, "run"),
        ("", Fuzzy, "other"),
    ];
    for (command, class, rule) in cases {
        assert_eq!(
            ShellCommandClassifier::command_class(command),
            (class, rule),
            "{command}"
        );
    }
}

mod round_trip {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Turn {
        User(String),
        Assistant(Option<String>, Vec<(String, Value)>, Vec<String>),
    }

    fn text() -> impl Strategy<Value = String> {
        "[a-z ]{1,12}[a-z]"
    }

    fn turn() -> impl Strategy<Value = Turn> {
        prop_oneof![
            text().prop_map(Turn::User),
            (
                prop::option::of(text()),
                prop::collection::vec(("[a-z]{1,6}", text()), 0..3),
            )
                .prop_map(|(t, calls)| {
                    let results = calls.iter().map(|(_, r)| r.clone()).collect();
                    let calls = calls
                        .into_iter()
                        .map(|(name, arg)| (name, json!({"command": arg, "n": 1})))
                        .collect();
                    Turn::Assistant(t, calls, results)
                }),
        ]
    }

    /// Valid OpenAI messages and the equivalent Anthropic request.
    fn documents(turns: &[Turn]) -> (Value, Value) {
        let mut openai = vec![json!({"role": "system", "content": "sys"})];
        let mut anthropic: Vec<Value> = Vec::new();
        let mut k = 0;
        let push = |anthropic: &mut Vec<Value>, role: &str, blocks: Vec<Value>| match anthropic
            .last_mut()
        {
            Some(last) if last["role"] == role => {
                last["content"].as_array_mut().unwrap().extend(blocks)
            }
            _ => anthropic.push(json!({"role": role, "content": blocks})),
        };
        for t in turns {
            match t {
                Turn::User(s) => {
                    openai.push(json!({"role": "user", "content": s}));
                    push(
                        &mut anthropic,
                        "user",
                        vec![json!({"type": "text", "text": s})],
                    );
                }
                Turn::Assistant(text, calls, results) => {
                    if text.is_none() && calls.is_empty() {
                        continue;
                    }
                    let mut m = json!({"role": "assistant", "content": text});
                    let mut blocks: Vec<Value> = text
                        .iter()
                        .map(|t| json!({"type": "text", "text": t}))
                        .collect();
                    let mut ids = Vec::new();
                    if !calls.is_empty() {
                        let mut list = Vec::new();
                        for (name, args) in calls {
                            k += 1;
                            let id = format!("call_{k}");
                            list.push(json!({"id": id, "type": "function",
                                "function": {"name": name, "arguments": args.to_string()}}));
                            blocks.push(
                                json!({"type": "tool_use", "id": id, "name": name, "input": args}),
                            );
                            ids.push(id);
                        }
                        m["tool_calls"] = Value::Array(list);
                    }
                    openai.push(m);
                    if anthropic.is_empty() {
                        anthropic.push(
                            json!({"role": "user", "content": [{"type": "text", "text": "start"}]}),
                        );
                    }
                    push(&mut anthropic, "assistant", blocks);
                    let mut res_blocks = Vec::new();
                    for (id, r) in ids.iter().zip(results) {
                        openai.push(json!({"role": "tool", "tool_call_id": id, "content": r}));
                        res_blocks
                            .push(json!({"type": "tool_result", "tool_use_id": id, "content": r}));
                    }
                    if !res_blocks.is_empty() {
                        // Results open the next user turn.
                        anthropic.push(json!({"role": "user", "content": res_blocks}));
                    }
                }
            }
        }
        let anthropic = json!({"system": [{"type": "text", "text": "sys"}], "messages": anthropic});
        (Value::Array(openai), anthropic)
    }

    proptest! {
        #[test]
        fn uncompacted_imports_render_their_input(turns in prop::collection::vec(turn(), 1..12)) {
            let (openai, anthropic) = documents(&turns);
            let mut h = History::new();
            import::import(&mut h, Format::OpenAi, &openai.to_string(), &strict_all).unwrap();
            // A conversation that starts with the assistant gets the note turn first, in
            // both formats (Anthropic requires it; OpenAI sends it too, so that both send
            // what usage counts).
            let mut expected = openai.as_array().unwrap().clone();
            if expected.get(1).is_some_and(|m| m["role"] == "assistant") {
                expected.insert(1, json!({"role": "user", "content": favur_context::render::FIRST_TURN_NOTE}));
            }
            prop_assert_eq!(render_openai(&h), Value::Array(expected));
            if anthropic["messages"].as_array().is_some_and(|m| !m.is_empty()) {
                let mut h = History::new();
                import::import(&mut h, Format::Anthropic, &anthropic.to_string(), &strict_all).unwrap();
                prop_assert_eq!(render_anthropic(&h).to_value(), anthropic);
            }
        }
    }
}
