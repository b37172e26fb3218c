//! The rules file: parsing, its located errors, first-match-wins, the explicit default,
//! and the unmatched-message error.

use super::common;

use favur_context::import::rules::{MessageFacts, RuleRef, Rules, RulesError};
use favur_context::import::{self, Format};
use favur_context::{History, Retention, Role};

fn err(text: &str) -> RulesError {
    Rules::from_toml(text).expect_err("the rules file should be rejected")
}

#[test]
fn parses_every_field_and_first_match_wins() {
    let rules = Rules::from_toml(
        r#"
        [[rule]]
        name = "pytest"
        role = ["tool"]
        tool = "^bash$"
        command = '^\s*pytest\b'
        class = "strict"

        [[rule]]
        name = "json path"
        arguments = '"path"'
        class = "fuzzy"

        [[rule]]
        name = "all tool output"
        role = "tool"
        class = "forgettable"

        [[rule]]
        name = "people"
        role = ["user", "system", "assistant"]
        class = "strict"
        "#,
    )
    .unwrap();
    assert_eq!(rules.len(), 4);
    assert_eq!(rules.default_class(), None);
    let pytest = MessageFacts::new(0, Role::Tool)
        .with_tool("bash")
        .with_command("pytest -x tests");
    let d = rules.classify(&pytest).unwrap();
    assert_eq!(
        (d.class, d.rule.as_deref()),
        (Retention::Strict, Some("pytest"))
    );
    assert_eq!(rules.rule_for(&pytest), Some(RuleRef::Rule(0)));
    // Same command from another tool: the first rule does not match, the third does.
    let other = MessageFacts::new(1, Role::Tool)
        .with_tool("shell")
        .with_command("pytest -x tests");
    assert_eq!(rules.rule_for(&other), Some(RuleRef::Rule(2)));
    let read = MessageFacts::new(2, Role::Tool)
        .with_tool("read")
        .with_arguments(r#"{"path": "a.rs"}"#);
    assert_eq!(rules.classify(&read).unwrap().class, Retention::Fuzzy);
    // A matcher on a field the message lacks does not match.
    let user = MessageFacts::new(3, Role::User);
    assert_eq!(rules.rule_for(&user), Some(RuleRef::Rule(3)));
    assert_eq!(rules.rule_name(RuleRef::Rule(1)), "json path");
}

#[test]
fn explicit_default_catches_the_rest_and_is_reported_as_default() {
    let rules = Rules::from_toml(
        "default = \"fuzzy\"\n[[rule]]\nname = \"u\"\nrole = \"user\"\nclass = \"strict\"\n",
    )
    .unwrap();
    let d = rules
        .classify(&MessageFacts::new(0, Role::Assistant))
        .unwrap();
    assert_eq!(
        (d.class, d.rule.as_deref()),
        (Retention::Fuzzy, Some("(default)"))
    );
    assert_eq!(
        rules.rule_for(&MessageFacts::new(0, Role::Assistant)),
        Some(RuleRef::Default)
    );
}

#[test]
fn unmatched_messages_are_listed_with_index_role_tool_and_excerpt() {
    let rules =
        Rules::from_toml("[[rule]]\nname = \"u\"\nrole = \"user\"\nclass = \"strict\"\n").unwrap();
    let long = "x".repeat(100);
    let facts = [
        MessageFacts::new(0, Role::User).with_text("task"),
        MessageFacts::new(1, Role::Assistant).with_text("THOUGHT: look\n\nat it"),
        MessageFacts::new(2, Role::Tool)
            .with_tool("bash")
            .with_text(&long),
    ];
    let e = rules.classify_all(&facts).unwrap_err();
    assert_eq!(e.messages.len(), 2);
    assert_eq!(e.messages[0].index, 1);
    assert_eq!(e.messages[0].excerpt, "THOUGHT: look at it");
    assert_eq!(e.messages[1].tool.as_deref(), Some("bash"));
    assert_eq!(e.messages[1].excerpt.chars().count(), 61); // 60 and an ellipsis
    let text = e.to_string();
    assert!(text.starts_with("2 messages matched no rule"), "{text}");
    assert!(
        text.contains("message 1: role assistant: \"THOUGHT: look at it\""),
        "{text}"
    );
    assert!(text.contains("message 2: role tool, tool `bash`"), "{text}");
}

#[test]
fn rules_classify_an_import_and_name_the_rule_in_the_call_site() {
    let rules = common::hand_rules();
    let json = r#"[{"role": "user", "content": "Fix it."},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "bash", "arguments": "{\"command\": \"ls -la\"}"}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "src"}]"#;
    let mut h = History::new();
    let report = import::import(&mut h, Format::OpenAi, json, &rules).unwrap();
    let result = h.recall(report.ids[2].1).unwrap();
    assert_eq!(result.retention(), Retention::Forgettable);
    assert_eq!(result.site().file(), "import:openai/listings");
    assert_eq!(
        h.recall(report.ids[1].1).unwrap().retention(),
        Retention::Strict
    );
}

#[test]
fn plain_chat_observations_count_as_tool_output_of_their_action() {
    let rules = Rules::from_toml(
        "[[rule]]\nname = \"ls out\"\nrole = \"tool\"\ncommand = '^ls'\nclass = \"forgettable\"\n[[rule]]\nname = \"rest\"\nclass = \"strict\"\n",
    )
    .unwrap();
    let t = import::parse(
        Format::MiniSweAgent,
        r#"[{"role": "user", "content": "task"},
        {"role": "assistant", "content": "THOUGHT: x\n\n```bash\nls -la\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\na\n</output>"}]"#,
    )
    .unwrap();
    let out = t.classify(&rules).unwrap();
    assert_eq!(out[0].classified.retention(), Retention::Strict);
    assert_eq!(out[2].classified.retention(), Retention::Forgettable);
}

#[test]
fn syntax_errors_give_line_and_column() {
    match err("[[rule]]\nname = \"a\"\nclass = strict\n") {
        RulesError::Syntax { line, column, .. } => assert_eq!((line, column), (3, 9)),
        other => panic!("expected a syntax error, got {other:?}"),
    }
}

#[test]
fn every_field_error_names_the_rule_and_field() {
    let cases: &[(&str, &str)] = &[
        (
            "default = \"fuzzy\"\n",
            "rules file has no rules: add at least one `[[rule]]` table",
        ),
        (
            "rule = 3\n",
            "top level: field `rule` must be an array of tables (`[[rule]]`), found the integer 3",
        ),
        (
            "colour = 1\n[[rule]]\nname = \"a\"\nclass = \"fuzzy\"\n",
            "top level: unknown field `colour`",
        ),
        (
            "default = \"maybe\"\n[[rule]]\nname = \"a\"\nclass = \"fuzzy\"\n",
            "top level: field `default` must be one of \"forgettable\", \"fuzzy\", \"strict\", found \"maybe\"",
        ),
        (
            "[[rule]]\nclass = \"fuzzy\"\n",
            "rule 1: missing field `name`",
        ),
        (
            "[[rule]]\nname = \"\"\nclass = \"fuzzy\"\n",
            "rule 1: field `name` must be a non-empty string, found the string \"\"",
        ),
        (
            "[[rule]]\nname = \"a\"\nclass = \"fuzzy\"\n[[rule]]\nname = \"b\"\n",
            "rule 2 (`b`): missing field `class`",
        ),
        (
            "[[rule]]\nname = \"a\"\nclass = \"stric\"\n",
            "rule 1 (`a`): field `class` must be one of \"forgettable\", \"fuzzy\", \"strict\", found \"stric\"",
        ),
        (
            "[[rule]]\nname = \"a\"\nclass = 2\n",
            "rule 1 (`a`): field `class` must be one of \"forgettable\", \"fuzzy\", \"strict\", found the integer 2",
        ),
        (
            "[[rule]]\nname = \"a\"\nrole = \"robot\"\nclass = \"fuzzy\"\n",
            "rule 1 (`a`): field `role` must be",
        ),
        (
            "[[rule]]\nname = \"a\"\nrole = []\nclass = \"fuzzy\"\n",
            "found an empty array",
        ),
        (
            "[[rule]]\nname = \"a\"\ntool = 5\nclass = \"fuzzy\"\n",
            "rule 1 (`a`): field `tool` must be a string (a regex), found the integer 5",
        ),
        (
            "[[rule]]\nname = \"a\"\ncommand = \"(unclosed\"\nclass = \"fuzzy\"\n",
            "rule 1 (`a`): field `command` is not a valid regex",
        ),
        (
            "[[rule]]\nname = \"a\"\narguments = \"[z-a]\"\nclass = \"fuzzy\"\n",
            "rule 1 (`a`): field `arguments` is not a valid regex",
        ),
        (
            "[[rule]]\nname = \"a\"\ncomand = \"ls\"\nclass = \"fuzzy\"\n",
            "rule 1 (`a`): unknown field `comand`",
        ),
        (
            "[[rule]]\nname = \"a\"\nclass = \"fuzzy\"\n[[rule]]\nname = \"a\"\nclass = \"strict\"\n",
            "rule 2: name `a` is already used by rule 1",
        ),
    ];
    for (text, expected) in cases {
        let message = err(text).to_string();
        assert!(
            message.contains(expected),
            "for {text:?}:\n  got      {message}\n  expected {expected}"
        );
    }
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let e = Rules::load("/no/such/dir/rules.toml").unwrap_err();
    assert!(matches!(e, RulesError::Io { .. }));
    assert!(e.to_string().contains("/no/such/dir/rules.toml"));
}

/// Shell commands and the class and rule the shipped rules give their output.
const SHELL_CASES: [(&str, Retention, &str); 13] = [
    ("ls -la", Retention::Forgettable, "listings and searches"),
    (
        "cd /testbed && grep -rn foo django",
        Retention::Forgettable,
        "listings and searches",
    ),
    (
        "find . -name '*.py'",
        Retention::Forgettable,
        "listings and searches",
    ),
    (
        "cat django/db/models/base.py",
        Retention::Strict,
        "file views",
    ),
    ("sed -n '100,200p' a.py", Retention::Strict, "file views"),
    (
        "nl -ba a.py | sed -n '1,20p'",
        Retention::Strict,
        "file views",
    ),
    (
        "sed -i 's/a/b/' a.py",
        Retention::Forgettable,
        "edits and file writes",
    ),
    (
        "cat <<'EOF' > reproduce.py\nprint(1)\nEOF",
        Retention::Forgettable,
        "edits and file writes",
    ),
    (
        "python reproduce_issue.py",
        Retention::Strict,
        "test and script runs",
    ),
    (
        "cd /testbed && python -m pytest tests/x.py",
        Retention::Strict,
        "test and script runs",
    ),
    (
        "./tests/runtests.py forms_tests",
        Retention::Strict,
        "test and script runs",
    ),
    ("git diff", Retention::Fuzzy, "diffs"),
    ("echo hello", Retention::Fuzzy, "other tool output"),
];

#[test]
fn shipped_rules_file_parses_and_classifies_shell_commands() {
    let rules = Rules::load(common::RULES).unwrap();
    assert_eq!(
        rules.default_class(),
        None,
        "the shipped file names no default"
    );
    let class_of = |command: &str| {
        let f = MessageFacts::new(0, Role::Tool)
            .with_tool("bash")
            .with_command(command);
        rules
            .classify(&f)
            .map(|d| (d.class, d.rule.unwrap_or_default().into_owned()))
    };
    for (command, class, rule) in SHELL_CASES {
        assert_eq!(
            class_of(command),
            Some((class, rule.to_owned())),
            "{command}"
        );
    }
    for role in [Role::System, Role::User, Role::Assistant] {
        assert!(
            rules.classify(&MessageFacts::new(0, role)).is_some(),
            "{role}"
        );
    }
}
