//! `favur-context audit`: on the shared traces with a deliberately wrong rules file and
//! with the shipped one, and on a journal and a saved history written by a small agent
//! whose one tool is misclassified.

mod common;

use std::path::PathBuf;
use std::process::Command;

use favur_context::journal::{JournaledHistory, OpenOptions};
use favur_context::{History, Message, Retention, Store, forgettable, strict};
use favur_context_cli::audit::{AuditArgs, AuditReport, audit_command, render_text};
use serde_json::{Value, json};

/// The shared traces (a missing folder fails the test in CI, see `common::traces_dir`).
fn traces() -> Option<Vec<PathBuf>> {
    let dir = common::traces_dir()?;
    let files = common::trace_files(&dir);
    assert!(!files.is_empty(), "no traces in {}", dir.display());
    Some(files)
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("favur-audit-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The shipped rules with the test and script runs made forgettable.
fn wrong_rules(dir: &std::path::Path) -> PathBuf {
    let shipped = std::fs::read_to_string(common::RULES).unwrap();
    let at = shipped
        .find("name = \"test and script runs\"")
        .expect("rule present");
    let class = shipped[at..].find("class = \"strict\"").expect("its class") + at;
    let wrong = format!(
        "{}class = \"forgettable\"{}",
        &shipped[..class],
        &shipped[class + "class = \"strict\"".len()..]
    );
    let path = dir.join("wrong-rules.toml");
    std::fs::write(&path, wrong).unwrap();
    path
}

fn audit_traces(files: &[PathBuf], rules: &std::path::Path) -> AuditReport {
    let mut argv: Vec<String> = vec!["audit".into()];
    argv.extend(files.iter().map(|f| f.display().to_string()));
    argv.extend(
        [
            "--rules",
            &rules.display().to_string(),
            "--policy",
            "default",
            "--window",
            "200000",
        ]
        .map(String::from),
    );
    audit_command(&common::parse_args::<AuditArgs>(argv)).expect("audit runs")
}

#[test]
fn the_wrong_rule_stands_out_and_the_shipped_rules_get_no_unbacked_suggestion() {
    let Some(files) = traces() else { return };
    let d = temp("traces");
    let wrong = audit_traces(&files, &wrong_rules(&d));
    let shipped = audit_traces(&files, std::path::Path::new(common::RULES));
    let avoidable = |report: &AuditReport, site: &str| {
        report
            .sites
            .iter()
            .find(|s| s.stats.site == site)
            .map_or(0, |s| s.avoidable)
    };
    // The audit ranks by what avoidable regret cost (each evicted entry's re-fetch
    // once): the wrong rule comes first, and it is the site whose avoidable regret the
    // wrong file raised the most (the shipped rules keep listings forgettable, whose
    // tier-2 drops count as avoidable in both runs).
    let top = &wrong.sites[0];
    assert_eq!(
        top.rule.as_deref(),
        Some("test and script runs"),
        "{}",
        render_text(&wrong)
    );
    let raised = wrong
        .sites
        .iter()
        .max_by_key(|s| {
            s.avoidable
                .saturating_sub(avoidable(&shipped, &s.stats.site))
        })
        .expect("sites");
    assert_eq!(raised.stats.site, top.stats.site);
    assert_eq!(top.stats.class, Retention::Forgettable);
    assert!(top.avoidable > 0 && top.avoidable_tokens > 0);
    assert!(top.avoidable_tokens <= top.stats.regret_tokens);
    assert_eq!(avoidable(&shipped, &top.stats.site), 0);
    assert!(
        wrong
            .sites
            .windows(2)
            .all(|w| w[0].avoidable_tokens >= w[1].avoidable_tokens),
        "{}",
        render_text(&wrong)
    );
    // Its regret count is the number of events naming one of its entries.
    let named = wrong
        .events
        .iter()
        .filter(|e| {
            e.event.site.file() == top.stats.site && e.event.class == Retention::Forgettable
        })
        .count();
    assert_eq!(top.stats.regrets, named as u64);
    assert!(render_text(&wrong).contains(&format!(
        "| `import:mini-swe-agent/test and script runs` | forgettable | {} |",
        top.stats.entries
    )));

    let row = shipped
        .sites
        .iter()
        .find(|s| s.rule.as_deref() == Some("test and script runs"))
        .expect("row");
    assert_eq!((row.stats.class, row.avoidable), (Retention::Strict, 0));
    // The same entries, classified right, cost fewer re-fetches.
    assert!(row.stats.regrets < top.stats.regrets);
    // A suggestion needs the replay's evidence (references lost) to reach the thresholds.
    for s in &shipped.sites {
        assert!(
            s.suggestion.is_none(),
            "unbacked suggestion for {}: {:?}",
            s.stats.site,
            s.suggestion
        );
        if let Some(ev) = s.references {
            let lost = ev.lost_summarized + ev.lost_dropped;
            assert!(
                lost < 10 || (lost as f64) < 0.10 * ev.references as f64,
                "{}: {ev:?}",
                s.stats.site
            );
        }
    }
    // Every entry of every transcript is counted once, by exactly one site.
    let entries: u64 = shipped.sites.iter().map(|s| s.stats.entries).sum();
    let wrong_entries: u64 = wrong.sites.iter().map(|s| s.stats.entries).sum();
    assert_eq!(entries, wrong_entries);
    for s in &shipped.sites {
        assert_eq!(
            s.stats.entries,
            s.stats.kept + s.stats.left_view(),
            "{}",
            s.stats.site
        );
    }
}

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
    let d = temp("journal");
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
    let d = temp("norules");
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
    let d = temp("sealed");
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
