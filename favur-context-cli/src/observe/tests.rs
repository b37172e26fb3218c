use clap::Parser;
use favur_context::{History, Policy, fuzzy};

use super::{Kind, ObserveArgs, audit_transcript, kind_of, load_audited};
use crate::tests::common::prepared;

#[test]
fn a_policy_named_on_the_command_line_takes_its_window() -> Result<(), crate::audit::AuditError> {
    #[derive(Parser)]
    struct A {
        #[command(flatten)]
        o: ObserveArgs,
    }
    let a = A::parse_from(["x", "--policy", "default", "--window", "64000"]);
    let (policy, rules) = a.o.load()?;
    assert_eq!(policy.map(|p| p.window_tokens()), Some(64_000));
    assert!(rules.is_none());
    Ok(())
}

#[test]
fn a_file_is_told_apart_as_a_history_or_a_transcript() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::temp_dir().join(format!("favur-kind-unit-{}.json", std::process::id()));
    std::fs::write(&path, r#"{"format": 1, "entries": []}"#)?;
    let history = kind_of(&path);
    std::fs::write(&path, r#"[{"role": "user", "content": "hi"}]"#)?;
    let transcript = kind_of(&path);
    std::fs::remove_file(&path)?;
    assert_eq!((history?, transcript?), (Kind::History, Kind::Transcript));
    Ok(())
}

#[test]
fn a_transcript_is_audited_by_the_rule_that_classified_it() -> Result<(), Box<dyn std::error::Error>>
{
    let p = prepared(serde_json::json!([
        {"role": "user", "content": "Fix it."},
        {"role": "assistant", "content": "Looking at src/parser.rs."},
    ]));
    let (ledger, summary, history) = audit_transcript(&p, &Policy::default())?;
    assert_eq!(ledger.sites()[0].site, "import:openai/all");
    assert_eq!((summary.requests, history.len()), (1, 2));
    Ok(())
}

#[test]
fn a_saved_history_is_loaded_with_its_ledger() -> Result<(), Box<dyn std::error::Error>> {
    let mut h = History::new();
    h.append(fuzzy!(user: "hello"));
    let path = std::env::temp_dir().join(format!("favur-load-unit-{}.json", std::process::id()));
    std::fs::write(&path, h.to_json())?;
    let journal = favur_context::journal::OpenOptions::new();
    let loaded = load_audited(&path, None, None, None, &journal);
    std::fs::remove_file(&path)?;
    let loaded = loaded?;
    assert_eq!(
        (loaded.history.len(), loaded.ledger.sites()[0].entries),
        (1, 1)
    );
    assert!(loaded.note.is_none());
    Ok(())
}
