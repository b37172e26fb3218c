use favur_context::import::rules::RuleRef;
use favur_context::{Policy, Retention};

use super::{misclassification, suggestions};
use crate::report::{RuleEvidence, Summary, Tally};
use crate::tests::common::rules;

#[test]
fn a_rule_whose_references_were_mostly_dropped_is_told_to_become_strict() {
    let mut s = Summary::default();
    let evidence = RuleEvidence {
        refs: Tally {
            total: 100,
            survived: 40,
        },
        lost_dropped: 60,
        ..Default::default()
    };
    s.by_rule.insert(RuleRef::Rule(0), evidence);
    let found = suggestions(&s, &rules("fuzzy"), Policy::default().tiers());
    assert_eq!(
        found.first().map(|f| (f.to, f.strength)),
        Some((Retention::Strict, "strong"))
    );
}

#[test]
fn the_misclassification_table_has_a_row_per_rule() {
    let table = misclassification(
        &Summary::default(),
        &rules("fuzzy"),
        Policy::default().tiers(),
    );
    assert!(table.contains("| rule |"));
}
