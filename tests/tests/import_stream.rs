//! The streaming import (`import::classify_str`, `import::import`) against the two-step
//! one (`parse_with` then `Transcript::classify`): the same classified messages for every
//! shared trace, and the same error for every malformed document, in every format.

mod common;

use common::{trace_files, traces_dir};
use favur_context::Retention;
use favur_context::import::shell::ShellCommandClassifier;
use favur_context::import::{
    self, Classifier, Decision, Format, ImportError, Imported, IncomingMessage, ParseOptions,
    Unclassified,
};
use favur_context::{History, Role};

/// The two-step import's answer, in the streaming import's shape.
fn two_steps<C: Classifier>(
    format: Format,
    json: &str,
    options: ParseOptions,
    classifier: &C,
) -> Result<Imported, ImportError> {
    let t = import::parse_with(format, json, options)?;
    Ok(Imported {
        messages: t.classify(classifier)?,
        exit: t.exit().map(str::to_owned),
    })
}

/// Declines assistant messages and names a rule for the first message of each role.
struct Picky;

impl Classifier for Picky {
    fn classify(&self, m: &IncomingMessage<'_>) -> Result<Decision, Unclassified> {
        match m.role() {
            Role::Assistant if m.text().contains("decline") => {
                Err(Unclassified(format!("assistant {}", m.index())))
            }
            _ if m.is_first_of_role() => Ok(Decision::from(Retention::Strict).with_rule("first")),
            _ => Ok(Decision::from(Retention::Fuzzy)),
        }
    }
}

fn same(format: Format, json: &str) {
    for options in [
        ParseOptions::default(),
        ParseOptions {
            keep_invalid_arguments: true,
        },
    ] {
        assert_eq!(
            import::classify_str(format, json, options, &Picky),
            two_steps(format, json, options, &Picky),
            "{format} {options:?}: {json}"
        );
    }
}

#[test]
fn every_trace_imports_the_same_streamed() {
    let Some(dir) = traces_dir() else { return };
    let files = trace_files(&dir);
    assert!(!files.is_empty());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let options = ParseOptions::default();
        let streamed = import::classify_str(
            Format::MiniSweAgent,
            &text,
            options,
            &ShellCommandClassifier,
        );
        let parsed = two_steps(
            Format::MiniSweAgent,
            &text,
            options,
            &ShellCommandClassifier,
        );
        assert_eq!(streamed, parsed, "{}", file.display());
        // And `import` records them as `import_into` does.
        let mut a = History::new();
        let mut b = History::new();
        let ra =
            import::import(&mut a, Format::MiniSweAgent, &text, &ShellCommandClassifier).unwrap();
        let rb = import::parse(Format::MiniSweAgent, &text)
            .unwrap()
            .import_into(&mut b, &ShellCommandClassifier)
            .unwrap();
        assert_eq!(ra, rb);
        assert_eq!(a.to_json(), b.to_json(), "{}", file.display());
    }
}

#[test]
fn malformed_documents_fail_the_same_streamed() {
    let docs = [
        "",
        "{not json",
        "[1, 2",
        "[] trailing",
        "3",
        "\"text\"",
        "null",
        "{}",
        r#"{"source": "x"}"#,
        r#"{"messages": 3}"#,
        r#"{"messages": {"role": "user"}}"#,
        r#"{"messages": [], "messages": []}"#,
        r#"[{"role": "user", "content": "a", "role": "system"}]"#,
        r#"[{"role": "user", "content": "a"}, 7]"#,
        r#"[{"content": "hi"}]"#,
        r#"[{"role": 3, "content": "hi"}]"#,
        r#"[{"role": "wizard", "content": "hi"}]"#,
        r#"[{"role": "user", "content": "a"}, {"role": "tool", "tool_call_id": "x", "content": "b"}]"#,
        r#"[{"role": "assistant", "content": "decline me"}, {"role": "user", "content": [{"type": "image"}]}]"#,
        r#"[{"role": "assistant", "content": "decline me"}, {"role": "assistant", "content": "decline too"}]"#,
        r#"[{"role": "system", "content": "s"}, {"role": "user", "content": "t"}, {"role": "assistant", "content": "ok"}]"#,
        r#"[{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{oops"}}]}]"#,
        r#"[{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "name": "bash", "arguments": "{\"command\": \"ls\"}"}]}, {"role": "tool", "tool_call_id": "c1", "content": "a"}, {"role": "tool", "tool_call_id": "c1", "content": "b"}]"#,
        r#"[{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "name": "bash", "arguments": 3}]}]"#,
        r#"{"messages": [{"role": "user", "content": "t"}, {"role": "exit", "content": "patch"}]}"#,
        r#"{"messages": [{"role": "exit", "content": "patch"}, {"role": "user", "content": "t"}]}"#,
        r#"{"messages": [{"role": "assistant", "content": "THOUGHT\n```bash\nls\n```"}, {"role": "user", "content": "<returncode>0</returncode>"}]}"#,
        r#"{"messages": [{"role": "user", "content": "a", "prompt_tokens": -1}]}"#,
        r#"{"system": "be brief", "messages": [{"role": "user", "content": "hi"}]}"#,
        r#"{"messages": [{"role": "user", "content": "hi"}], "system": [{"type": "text", "text": "late"}]}"#,
        r#"{"messages": [{"role": "user", "content": 3}], "system": [{"type": "image"}]}"#,
        r#"{"messages": [{"role": "system", "content": "no"}]}"#,
        r#"{"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]}, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}, {"type": "tool_result", "tool_use_id": "t1", "content": "b"}]}]}"#,
        r#"{"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "tool_result", "tool_use_id": "zz"}]}]}"#,
        r#"[{"role": "user", "content": "\ud800"}]"#,
        r#"[{"role": "user", "content": "x", "n": 1e999}]"#,
        // Gemini contents.
        r#"{"contents": 3}"#,
        r#"{"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "systemInstruction": {"parts": [{"text": "late"}]}}"#,
        r#"{"systemInstruction": {"parts": [{"inlineData": {}}]}, "contents": []}"#,
        r#"[{"role": "user", "parts": []}]"#,
        r#"[{"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]}, {"role": "user", "parts": [{"text": "no answer"}]}]"#,
        r#"[{"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}, {"functionCall": {"name": "cat", "args": {}}}]}, {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "a"}}}, {"functionResponse": {"name": "cat", "response": {"output": "b"}}}]}, {"role": "model", "parts": [{"text": "decline me"}]}]"#,
        r#"[{"role": "model", "parts": [{"thoughtSignature": "c2ln", "functionCall": {"name": "ls", "args": {}}}]}, {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "a"}}}, {"inlineData": {"mimeType": "image/png", "data": "iVBO"}}]}]"#,
    ];
    for doc in docs {
        for format in [
            Format::OpenAi,
            Format::Anthropic,
            Format::MiniSweAgent,
            Format::Gemini,
        ] {
            same(format, doc);
        }
    }
}

#[test]
fn a_failed_streamed_import_leaves_the_history_unchanged() {
    let mut h = History::new();
    h.append(favur_context::fuzzy!(user: "before"));
    let before = h.to_json();
    let doc = r#"[{"role": "user", "content": "a"}, {"role": "assistant", "content": "decline"}, {"content": "x"}]"#;
    let err = import::import(&mut h, Format::OpenAi, doc, &Picky).unwrap_err();
    assert_eq!(
        err,
        ImportError::Message {
            index: 2,
            problem: "missing `role`".into()
        }
    );
    let doc = r#"[{"role": "user", "content": "a"}, {"role": "assistant", "content": "decline"}]"#;
    let err = import::import(&mut h, Format::OpenAi, doc, &Picky).unwrap_err();
    assert!(
        matches!(err, ImportError::Unclassified { ref unclassified } if unclassified == &[(1, "assistant 1".to_owned())])
    );
    assert_eq!(h.to_json(), before);
}
