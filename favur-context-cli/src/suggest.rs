//! The misclassification report: per rule, the evidence of the policy run, and the class
//! changes it suggests.

use std::fmt::Write as _;

use favur_context::Retention;
use favur_context::compact::Tier;
use favur_context::import::rules::{RuleRef, Rules};

use crate::report::Summary;

/// A suggested class change for one rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    /// The rule.
    pub rule: String,
    /// Its class.
    pub from: Retention,
    /// The suggested class.
    pub to: Retention,
    /// "strong" or "moderate".
    pub strength: &'static str,
    /// The counts behind it.
    pub evidence: String,
}

/// Thresholds for suggestions: `(min_lost, raise_share, strong_share, min_outputs,
/// lower_share)`. Raising a class: at least `min_lost` references lost and at least
/// `raise_share` of the rule's references lost ("strong" at 3x the count and
/// `strong_share`, "moderate" below). Lowering a class: at least `min_outputs` tool
/// outputs, at least `lower_share` of them never referenced again, and at most 5% of its
/// references lost ("strong" at 3x the count and 95%).
pub const SUGGEST: (u64, f64, f64, u64, f64) = (10, 0.10, 0.20, 10, 0.85);

/// Whether two classes are treated alike by every tier (a change between them would
/// change nothing).
pub(crate) fn alike(tiers: &[Tier], a: Retention, b: Retention) -> bool {
    tiers.iter().all(|t| t.action(a) == t.action(b))
}

/// Suggested class changes, from the evidence of the policy run.
pub fn suggestions(policy: &Summary, rules: &Rules, tiers: &[Tier]) -> Vec<Suggestion> {
    let (min_lost, raise_share, strong_share, min_outputs, lower_share) = SUGGEST;
    let mut out = Vec::new();
    for (key, ev) in &policy.by_rule {
        let class = match key {
            RuleRef::Rule(i) => rules.rules().get(*i).map(|r| r.class()),
            RuleRef::Default => rules.default_class(),
        };
        let Some(class) = class else { continue };
        let lost = ev.refs.total - ev.refs.survived;
        let lost_share = if ev.refs.total == 0 {
            0.0
        } else {
            lost as f64 / ev.refs.total as f64
        };
        // The nearest class that the tiers treat differently, above and below.
        let up = Retention::ALL
            .into_iter()
            .find(|c| *c > class && !alike(tiers, *c, class));
        let down = Retention::ALL
            .into_iter()
            .rev()
            .find(|c| *c < class && !alike(tiers, *c, class));
        if let Some(to) = up
            && lost >= min_lost
            && lost_share >= raise_share
        {
            let strength = strength(lost >= 3 * min_lost && lost_share >= strong_share);
            out.push(Suggestion {
                rule: rules.rule_name(*key).to_owned(),
                from: class,
                to,
                strength,
                evidence: format!(
                    "{lost} of {} references to its entries lost ({:.0}%): {} while summarized, {} dropped",
                    ev.refs.total,
                    lost_share * 100.0,
                    ev.lost_summarized,
                    ev.lost_dropped
                ),
            });
        } else if let Some(to) = down
            && ev.outputs >= min_outputs
        {
            let share = ev.never_referenced as f64 / ev.outputs as f64;
            if share >= lower_share && lost_share <= 0.05 {
                out.push(Suggestion {
                    rule: rules.rule_name(*key).to_owned(),
                    from: class,
                    to,
                    strength: strength(ev.outputs >= 3 * min_outputs && share >= 0.95),
                    evidence: format!(
                        "{} of {} tool outputs never referenced again ({:.0}%), {lost} references lost",
                        ev.never_referenced,
                        ev.outputs,
                        share * 100.0
                    ),
                });
            }
        }
    }
    out
}

/// The misclassification report for the policy run, as Markdown.
pub fn misclassification(policy: &Summary, rules: &Rules, tiers: &[Tier]) -> String {
    let mut out = String::new();
    out.push_str("| rule | class | entries | tool outputs never referenced again | references | lost (summarized / dropped) |\n|---|---|---:|---:|---:|---:|\n");
    for (key, ev) in &policy.by_rule {
        let class = match key {
            RuleRef::Rule(i) => rules.rules().get(*i).map(|r| r.class().as_str()),
            RuleRef::Default => rules.default_class().map(Retention::as_str),
        }
        .unwrap_or("?");
        let never = if ev.outputs == 0 {
            "–".to_owned()
        } else {
            format!(
                "{}/{} ({:.0}%)",
                ev.never_referenced,
                ev.outputs,
                ev.never_referenced as f64 * 100.0 / ev.outputs as f64
            )
        };
        let _ = writeln!(
            out,
            "| `{}` | {class} | {} | {never} | {} | {} ({} / {}) |",
            rules.rule_name(*key),
            ev.entries,
            ev.refs.total,
            ev.refs.total - ev.refs.survived,
            ev.lost_summarized,
            ev.lost_dropped
        );
    }
    let found = suggestions(policy, rules, tiers);
    if found.is_empty() {
        out.push_str("\nNo class change suggested: no rule reaches the evidence thresholds.\n");
    } else {
        out.push('\n');
        for s in found {
            let _ = writeln!(
                out,
                "- suggest `{}`: {} -> {} ({} evidence: {})",
                s.rule, s.from, s.to, s.strength, s.evidence
            );
        }
    }
    out
}

/// A suggestion's strength: "strong" where the evidence reaches the strong thresholds.
pub(crate) fn strength(strong: bool) -> &'static str {
    if strong { "strong" } else { "moderate" }
}

#[cfg(test)]
mod tests;
