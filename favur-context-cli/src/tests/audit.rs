//! `favur-context audit`: on the shared traces with a deliberately wrong rules file and
//! with the shipped one, and on a journal and a saved history written by a small agent
//! whose one tool is misclassified.

use super::common;
use std::path::PathBuf;

use crate::audit::{AuditArgs, AuditReport, audit_command, render_text};
use favur_context::Retention;

/// The shared traces (a missing folder fails the test in CI, see `common::traces_dir`).
fn traces() -> Option<Vec<PathBuf>> {
    let dir = common::traces_dir()?;
    let files = common::trace_files(&dir);
    assert!(!files.is_empty(), "no traces in {}", dir.display());
    Some(files)
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
    let d = common::temp("traces");
    let wrong = audit_traces(&files, &wrong_rules(&d));
    let shipped = audit_traces(&files, std::path::Path::new(common::RULES));
    let regrets = the_wrong_rule_comes_first(&wrong, &shipped);
    the_shipped_rules_fit(&shipped, &wrong, regrets);
}

/// The wrong rule (test runs forgettable) is the audit's first site, the one whose
/// avoidable regret it raised the most; returns its regret count.
fn the_wrong_rule_comes_first(wrong: &AuditReport, shipped: &AuditReport) -> u64 {
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
        render_text(wrong)
    );
    let raised = wrong
        .sites
        .iter()
        .max_by_key(|s| {
            s.avoidable
                .saturating_sub(avoidable(shipped, &s.stats.site))
        })
        .expect("sites");
    assert_eq!(raised.stats.site, top.stats.site);
    assert_eq!(top.stats.class, Retention::Forgettable);
    assert!(top.avoidable > 0 && top.avoidable_tokens > 0);
    assert!(top.avoidable_tokens <= top.stats.regret_tokens);
    assert_eq!(avoidable(shipped, &top.stats.site), 0);
    assert!(
        wrong
            .sites
            .windows(2)
            .all(|w| w[0].avoidable_tokens >= w[1].avoidable_tokens),
        "{}",
        render_text(wrong)
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
    assert!(render_text(wrong).contains(&format!(
        "| `import:mini-swe-agent/test and script runs` | forgettable | {} |",
        top.stats.entries
    )));
    top.stats.regrets
}

/// The shipped rules classify test runs strict (fewer re-fetches than the wrong rule's
/// `wrong_regrets`), get no suggestion the evidence does not back, and count every entry
/// once.
fn the_shipped_rules_fit(shipped: &AuditReport, wrong: &AuditReport, wrong_regrets: u64) {
    let row = shipped
        .sites
        .iter()
        .find(|s| s.rule.as_deref() == Some("test and script runs"))
        .expect("row");
    assert_eq!((row.stats.class, row.avoidable), (Retention::Strict, 0));
    // The same entries, classified right, cost fewer re-fetches.
    assert!(row.stats.regrets < wrong_regrets);
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
