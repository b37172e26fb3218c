//! `favur-context audit`: on the shared traces with a deliberately wrong rules file and
//! with the shipped one, and on a journal and a saved history written by a small agent
//! whose one tool is misclassified.

mod common;

use std::path::PathBuf;
use std::process::Command;

use favur_context::journal::{JournaledHistory, OpenOptions};
use favur_context::{History, Message, Retention, Store, forgettable, strict};
use serde_json::{Value, json};

/// Writes the journal of an agent whose test tool is classified forgettable: five runs of
/// the same tests, each result dropped at tier 2 before the next run. Returns the line of
/// the misclassified site and the ids of its results.
fn misclassified_agent(path: &std::path::Path) -> u32 {
    let _ = std::fs::remove_file(path);
    let mut j = JournaledHistory::open(path).expect("open journal");
    j.pin(strict!(system: "You are a coding agent.")).unwrap();
    j.append(strict!(user: "Make the parser tests pass."))
        .unwrap();
    let mut line = 0;
    for round in 0..5 {
        common::append_bash_call(&mut j, &format!("t{round}"), "cargo test parse");
        let failures: String = (0..6)
            .map(|i| {
                format!(
                    "test parse::case_{i} ... FAILED at src/parse.rs:{}:5\n",
                    100 + i
                )
            })
            .collect();
        let message = Message::tool_result(format!("t{round}"), failures, true);
        line = line!() + 1;
        let classified = message.classify(Retention::Forgettable);
        let result = j.append(classified).unwrap();
        common::drop_at(&mut j, 2, result);
    }
    line
}

#[test]
fn the_binary_audits_a_journal_and_a_saved_history_and_names_the_careless_line() {
    let d = common::temp("journal");
    let journal = d.join("agent.jsonl");
    let line = misclassified_agent(&journal);
    let (history, _) = History::from_journal(std::fs::File::open(&journal).unwrap()).unwrap();
    let saved = d.join("agent.json");
    std::fs::write(&saved, history.to_json()).unwrap();
    let site = format!("favur-context-cli/tests/audit.rs:{line}:");

    let audit_json = |file: &PathBuf| -> Value {
        let out = Command::new(env!("CARGO_BIN_EXE_favur-context"))
            .arg("audit")
            .arg(file)
            .arg("--json")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        serde_json::from_slice(&out.stdout).expect("JSON output")
    };
    let v = audit_json(&journal);
    let top = &v["sites"][0];
    assert!(top["site"].as_str().unwrap().starts_with(&site), "{top}");
    assert_eq!(top["class"], "forgettable");
    let figures = |s: &Value| {
        (
            s["entries"].as_u64(),
            s["regrets"].as_u64(),
            s["avoidable"].as_u64(),
        )
    };
    assert_eq!(figures(top), (Some(5), Some(4), Some(4)));
    assert_eq!(top["dropped"]["2"], 5);
    assert_eq!(top["suggestion"]["to"], "strict");
    assert_eq!(v["events"].as_array().unwrap().len(), 4);
    for e in v["events"].as_array().unwrap() {
        assert_eq!(e["kind"], "repeated_call");
        assert_eq!(e["call"], "bash: cargo test parse");
        assert_eq!(e["site"]["line"], line);
        assert_eq!(e["fate"], json!({"fate": "dropped", "tier": 2}));
    }
    assert!(v["notes"].as_array().unwrap().is_empty());

    // A saved history has the same entries and fates, but not the order of its drop-only
    // compactions: fewer regrets at most, and a note saying why.
    let h = audit_json(&saved);
    let same = h["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["site"] == top["site"])
        .expect("site");
    assert_eq!(
        (same["entries"].as_u64(), &same["dropped"]),
        (Some(5), &top["dropped"])
    );
    assert!(same["regrets"].as_u64() <= top["regrets"].as_u64());
    let notes = h["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0]
            .as_str()
            .unwrap()
            .contains("5 of its 5 compactions wrote no summary"),
        "{notes:?}"
    );

    let out = Command::new(env!("CARGO_BIN_EXE_favur-context"))
        .arg("audit")
        .arg(&journal)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("## Suggested class changes"), "{text}");
    assert!(text.contains(&site) && text.contains(": forgettable -> strict (moderate evidence: 4 of 5 entries that left the view were needed again (80%)"), "{text}");
    assert!(text.contains("repeated call of #"), "{text}");
}

#[test]
fn a_transcript_without_rules_is_an_error_naming_the_file() {
    let d = common::temp("norules");
    let t = d.join("t.json");
    std::fs::write(&t, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_favur-context"))
        .arg("audit")
        .arg(&t)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("t.json") && err.contains("--rules and --policy"),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_favur-context"))
        .arg("audit")
        .arg(d.join("missing.jsonl"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
}

#[test]
fn a_sealed_journal_is_audited_and_inspected_with_its_key_only() {
    use favur_context::store::SealKey;
    let d = common::temp("sealed");
    let journal = d.join("sealed.jsonl");
    let key = b"the seal key of this agent, 32+ bytes long".to_vec();
    let key_file = d.join("seal.key");
    std::fs::write(&key_file, &key).unwrap();
    let mut j = OpenOptions::new()
        .seal_key(SealKey::new(&key).unwrap())
        .open(&journal)
        .unwrap();
    j.pin(strict!(system: "You are a coding agent.")).unwrap();
    for round in 0..3 {
        common::append_bash_call(&mut j, &format!("t{round}"), "cargo test parse");
        let result = j
            .append(forgettable!(tool_result(format!("t{round}")): "test parse ... FAILED"))
            .unwrap();
        common::drop_at(&mut j, 2, result);
    }
    drop(j);
    let run = |args: &[&std::ffi::OsStr]| {
        Command::new(env!("CARGO_BIN_EXE_favur-context"))
            .args(args)
            .output()
            .unwrap()
    };
    let (audit, json) = (
        std::ffi::OsStr::new("audit"),
        std::ffi::OsStr::new("--json"),
    );
    let with_key = [
        std::ffi::OsStr::new("--seal-key-file"),
        key_file.as_os_str(),
    ];

    let out = run(&[audit, journal.as_os_str(), json, with_key[0], with_key[1]]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["events"].as_array().unwrap().len(), 2, "{v}");

    // Without its key, or with another, the journal is not read unverified.
    let out = run(&[audit, journal.as_os_str(), json]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("sealed.jsonl") && err.contains("seal key"),
        "{err}"
    );
    let other = d.join("other.key");
    std::fs::write(&other, [7u8; 40]).unwrap();
    let out = run(&[
        audit,
        journal.as_os_str(),
        json,
        with_key[0],
        other.as_os_str(),
    ]);
    assert!(!out.status.success());
    // A key file too short to be a key says so.
    let short = d.join("short.key");
    std::fs::write(&short, b"short").unwrap();
    let out = run(&[audit, journal.as_os_str(), with_key[0], short.as_os_str()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("short.key"), "{err}");

    // The inspector reads it too.
    let page = d.join("sealed.html");
    let out = run(&[
        std::ffi::OsStr::new("inspect"),
        journal.as_os_str(),
        std::ffi::OsStr::new("--out"),
        page.as_os_str(),
        with_key[0],
        with_key[1],
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_to_string(&page)
            .unwrap()
            .contains("cargo test parse")
    );
}
