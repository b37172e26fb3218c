//! Fixtures the unit tests share: a rules file and small classified transcripts.

use favur_context::import::Format;
use favur_context::import::rules::Rules;

use crate::replay::Prepared;
use crate::transcript::ClassifiedTranscript;

/// One rule putting every message in `class`.
pub(crate) fn rules(class: &str) -> Rules {
    let toml = format!("[[rule]]\nname = \"all\"\nclass = \"{class}\"\n");
    match Rules::from_toml(&toml) {
        Ok(rules) => rules,
        Err(e) => panic!("fixture rules: {e}"),
    }
}

/// An OpenAI-format transcript, every message fuzzy, ready to replay.
pub(crate) fn prepared(json: serde_json::Value) -> Prepared {
    match ClassifiedTranscript::from_value("t", Format::OpenAi, &json, &rules("fuzzy")) {
        Ok(t) => Prepared::new(t),
        Err(e) => panic!("fixture transcript: {e}"),
    }
}

/// Two user turns and two assistant replies, the first naming a file.
pub(crate) fn four_turns() -> Prepared {
    prepared(serde_json::json!([
        {"role": "user", "content": "Fix it."},
        {"role": "assistant", "content": "Looking at src/parser.rs."},
        {"role": "user", "content": "Go on."},
        {"role": "assistant", "content": "Done."},
    ]))
}
