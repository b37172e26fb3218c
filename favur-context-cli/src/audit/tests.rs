use favur_context::audit::{Fate, RegretEvent, RegretKind, SiteStats};
use favur_context::message::CallSite;
use std::num::NonZeroU8;

use favur_context::{EntryId, Policy, Retention};

use super::{AuditReport, avoidable, regret_suggestion, render_json, render_text};

const TWO: NonZeroU8 = NonZeroU8::new(2).unwrap();
const THREE: NonZeroU8 = NonZeroU8::new(3).unwrap();

#[test]
fn a_site_dropped_and_regretted_is_told_to_become_strict() {
    let mut s = SiteStats::new("src/agent.rs:40:9", Retention::Forgettable);
    s.dropped.insert(TWO, 10);
    s.regrets = 4;
    let tiers = Policy::default().tiers().to_vec();
    let found = regret_suggestion(&s, 4, &tiers).map(|f| (f.to, f.strength));
    assert_eq!(found, Some((Retention::Strict, "moderate")));
    assert!(regret_suggestion(&s, 2, &tiers).is_none());
}

#[test]
fn a_regret_is_avoidable_only_where_a_stricter_class_would_have_kept_it() {
    let mut e = RegretEvent {
        kind: RegretKind::Recall,
        evicted: EntryId(1),
        site: CallSite::new("a.rs", 1, 1),
        class: Retention::Forgettable,
        fate: Fate::Dropped { tier: TWO },
        cost_tokens: 9,
        at: EntryId(5),
    };
    let policy = Policy::default();
    let tiers = policy.tiers();
    assert!(avoidable(&e, tiers)); // at tier 2 strict is summarized, not dropped
    e.fate = Fate::Dropped { tier: THREE };
    assert!(!avoidable(&e, tiers)); // tier 3 drops every class
    e.class = Retention::Strict;
    e.fate = Fate::Summarized { tier: TWO };
    assert!(!avoidable(&e, tiers));
}

fn empty_report() -> AuditReport {
    AuditReport {
        sources: vec!["a.jsonl".into()],
        sites: vec![],
        events: vec![],
        unseen: 0,
        notes: vec![],
    }
}

#[test]
fn an_empty_audit_says_no_change_is_suggested() {
    assert!(render_text(&empty_report()).contains("No class change suggested"));
}

#[test]
fn the_json_report_is_valid_json_with_its_sites() -> Result<(), serde_json::Error> {
    let v: serde_json::Value = serde_json::from_str(&render_json(&empty_report()))?;
    assert_eq!(v["sites"].as_array().map(Vec::len), Some(0));
    Ok(())
}
