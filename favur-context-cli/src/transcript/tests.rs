use favur_context::Retention;
use favur_context::import::Format;
use favur_context::import::rules::Rules;
use serde_json::json;

use super::{ClassifiedTranscript, TranscriptError, detect_format, load};
use crate::tests::common::rules;

#[test]
fn each_message_is_classified_by_the_rules() -> Result<(), TranscriptError> {
    let json = json!([{"role": "user", "content": "hi"}]);
    let c = ClassifiedTranscript::from_value("t", Format::OpenAi, &json, &rules("strict"))?;
    assert_eq!(c.decisions[0].class, Retention::Strict);
    assert_eq!(c.message(0).map(|m| m.text()).as_deref(), Some("hi"));
    Ok(())
}

#[test]
fn a_message_no_rule_matches_is_an_error() -> Result<(), Box<dyn std::error::Error>> {
    let rules =
        Rules::from_toml("[[rule]]\nname = \"users\"\nrole = \"user\"\nclass = \"strict\"\n")?;
    let json = json!([{"role": "assistant", "content": "hi"}]);
    let err = ClassifiedTranscript::from_value("t", Format::OpenAi, &json, &rules).err();
    assert!(matches!(err, Some(TranscriptError::Unmatched { .. })));
    Ok(())
}

#[test]
fn a_missing_file_is_an_io_error() {
    let loaded = load("/no/such/file.json", None, &rules("strict"));
    assert!(matches!(loaded, Err(TranscriptError::Io { .. })));
}

#[test]
fn the_format_is_told_by_the_document_shape() {
    let cases = [
        (
            json!({"format": "mini-swe-agent-1", "messages": []}),
            Format::MiniSweAgent,
        ),
        (json!({"system": "s", "messages": []}), Format::Anthropic),
        (json!({"contents": []}), Format::Gemini),
        (json!([{"role": "user", "content": "hi"}]), Format::OpenAi),
        (json!({"input": [], "output": []}), Format::Responses),
    ];
    for (doc, format) in cases {
        assert_eq!(detect_format(&doc), format, "{doc}");
    }
}

#[test]
fn a_loaded_transcript_takes_its_id_from_the_file() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::temp_dir().join(format!("favur-load-doc-{}.json", std::process::id()));
    std::fs::write(
        &path,
        r#"{"instance_id": "x", "messages": [{"role": "user", "content": "hi"}]}"#,
    )?;
    let t = load(&path, None, &rules("strict"));
    std::fs::remove_file(&path)?;
    assert_eq!(t?.id, "x");
    Ok(())
}
