//! The `audit` command: which call sites (or, for imported transcripts, which rules) cost
//! a job a re-fetch, with the evidence behind each suggested class change.
//!
//! Journals and saved histories are audited as they are: the library's
//! [`Ledger`](favur_context::audit::Ledger) reads their entries and compactions and finds the recalls and repeated tool
//! calls of entries that had left the view. Transcripts are replayed under the policy
//! (as `replay` does, without baselines), observed by a ledger as they run; the replay's
//! lost references become regret events too, and the replay's misclassification evidence
//! backs the suggestions.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::num::NonZeroU8;
use std::path::PathBuf;

use clap::Args;
use favur_context::audit::{RegretEvent, SiteStats, site_key, sort_sites};
use favur_context::compact::Tier;
use favur_context::import::rules::Rules;
use favur_context::{EntryId, Policy, Retention};
use serde::Serialize;

pub use crate::audit_error::AuditError;
use crate::observe::{ObserveArgs, load_audited};
use crate::report::{RuleEvidence, Summary};
use crate::suggest::{Suggestion, alike, strength, suggestions};

/// Arguments of `favur-context audit`.
#[derive(Debug, Clone, Args)]
pub struct AuditArgs {
    /// Journals (`.jsonl`), saved histories (`History::to_json`) or transcripts (JSON:
    /// the shared traces' schema, OpenAI chat, mini-swe-agent). The kind is detected per
    /// file.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Rules, policy and format for transcripts.
    #[command(flatten)]
    pub observe: ObserveArgs,
    /// Print JSON instead of the text table.
    #[arg(long)]
    pub json: bool,
}

/// The replay's evidence about one rule's entries (see `docs/replay.md`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// Tool outputs the rule classified.
    pub outputs: u64,
    /// Of those, never referenced by a later assistant message.
    pub never_referenced: u64,
    /// References whose source the rule classified.
    pub references: u64,
    /// Of those, lost (not in the request) while the source was summarized.
    pub lost_summarized: u64,
    /// Lost while the source was dropped or a placeholder.
    pub lost_dropped: u64,
}

impl From<&RuleEvidence> for Evidence {
    fn from(e: &RuleEvidence) -> Self {
        Evidence {
            outputs: e.outputs,
            never_referenced: e.never_referenced,
            references: e.refs.total,
            lost_summarized: e.lost_summarized,
            lost_dropped: e.lost_dropped,
        }
    }
}

/// A suggested class change with the counts behind it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Suggested {
    /// The class suggested.
    pub to: Retention,
    /// "strong" or "moderate".
    pub strength: &'static str,
    /// The counts behind it.
    pub evidence: String,
}

/// One row of the audit: a site's ledger figures, the replay's evidence (transcripts
/// only) and the suggestion, if any.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SiteAudit {
    /// The ledger's figures.
    #[serde(flatten)]
    pub stats: SiteStats,
    /// Of its regret events, those a stricter class would have avoided ([`avoidable`]).
    pub avoidable: u64,
    /// What those avoidable events cost: the tokens re-fetched to get back what a
    /// stricter class would have kept, each evicted entry counted once (several answers
    /// that lost the same output need one re-run, not several). The audit's ranking key.
    pub avoidable_tokens: u64,
    /// For an imported site, the rule's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// For an imported site, the replay's reference evidence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub references: Option<Evidence>,
    /// The suggested class change, if the evidence reaches the thresholds.
    pub suggestion: Option<Suggested>,
}

/// A regret event and the file it was found in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourcedEvent {
    /// The journal, history or transcript.
    pub source: String,
    /// The event.
    #[serde(flatten)]
    pub event: RegretEvent,
}

/// The audit of one or more files.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditReport {
    /// The files audited.
    pub sources: Vec<String>,
    /// Every site, most avoidable re-fetch tokens first ([`SiteAudit::avoidable_tokens`]),
    /// then most avoidable regret, then the ledger's order (regret, re-fetch tokens).
    pub sites: Vec<SiteAudit>,
    /// Every regret event, by file, in the order found.
    pub events: Vec<SourcedEvent>,
    /// Entry ids no ledger saw (originals not in the file).
    pub unseen: u64,
    /// What the figures cannot tell (a saved history's compactions of unknown order).
    pub notes: Vec<String>,
}

/// Thresholds for a suggestion from regret alone (journals and histories, where no
/// replay measures references): `(min_regrets, share, strong_share)`. Raise a site's
/// class when at least `min_regrets` of its entries were needed again after they left
/// the view, in a way a stricter class would have avoided ([`avoidable`]), and that is at
/// least `share` of the entries that left ("strong" at 3x the
/// count and `strong_share`). Lowering a class is never suggested from regret alone: an
/// entry nobody asked for again may still have been missed.
pub const LIVE_SUGGEST: (u64, f64, f64) = (3, 0.10, 0.20);

/// The suggestion for a site from the number of its entries that left the view and were
/// needed again in a way a stricter class would have avoided (`regretted`; see
/// [`avoidable`]), with `tiers` deciding which class change would change anything.
pub fn regret_suggestion(s: &SiteStats, regretted: u64, tiers: &[Tier]) -> Option<Suggested> {
    let (min, share, strong_share) = LIVE_SUGGEST;
    let left = s.left_view();
    if regretted < min || left == 0 {
        return None;
    }
    let got = regretted as f64 / left as f64;
    if got < share {
        return None;
    }
    let to = Retention::ALL
        .into_iter()
        .find(|c| *c > s.class && !alike(tiers, *c, s.class))?;
    let strength = strength(regretted >= 3 * min && got >= strong_share);
    let kinds: Vec<String> = s
        .regret_kinds
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    Some(Suggested {
        to,
        strength,
        evidence: format!(
            "{regretted} of {left} entries that left the view were needed again ({:.0}%) and a stricter class would have kept more of them; all regret: {}, re-fetching {} tokens",
            got * 100.0,
            kinds.join(", "),
            s.regret_tokens
        ),
    })
}

/// Whether a regret could have been avoided by classifying the evicted entry stricter:
/// some stricter class gets a milder action (keep rather than summarize, summarize rather
/// than drop) from the tier that evicted it. A strict entry's regret, or one evicted by a
/// tier that treats every class alike, is the policy's cost, not the call site's. A tier
/// number `tiers` does not have counts as not avoidable.
pub fn avoidable(event: &RegretEvent, tiers: &[Tier]) -> bool {
    let Some(tier) = event
        .fate
        .tier()
        .and_then(|t| tiers.get(usize::from(t.get() - 1)))
    else {
        return false;
    };
    let now = tier.action(event.class);
    Retention::ALL
        .into_iter()
        .any(|c| c > event.class && tier.action(c) < now)
}

/// Runs `favur-context audit` and returns the report.
pub fn audit_command(args: &AuditArgs) -> Result<AuditReport, AuditError> {
    let (policy, rules) = args.observe.load()?;
    let tiers: Vec<Tier> = policy.as_ref().map_or_else(
        || Policy::default().tiers().to_vec(),
        |p| p.tiers().to_vec(),
    );
    let read = read_all(args, rules.as_ref(), policy.as_ref())?;
    let replayed: Vec<Suggestion> = rules
        .as_ref()
        .map(|r| suggestions(&read.evidence, r, &tiers))
        .unwrap_or_default();
    let by_rule: HashMap<String, Evidence> = rules
        .as_ref()
        .map(|r| {
            read.evidence
                .by_rule
                .iter()
                .map(|(k, e)| (r.rule_name(*k).to_owned(), Evidence::from(e)))
                .collect()
        })
        .unwrap_or_default();
    let avoided = avoided_by_site(&read.events, &tiers);
    let mut stats: Vec<SiteStats> = read.merged.into_values().collect();
    sort_sites(&mut stats);
    let mut sites: Vec<SiteAudit> = stats
        .into_iter()
        .map(|stats| site_audit(stats, &avoided, &by_rule, &replayed, &tiers))
        .collect();
    // What a misclassification cost the job, in the unit the window is paid in: a
    // re-listed directory costs less than a re-run test suite. Stable: ties keep the
    // ledger's order (regret, re-fetch tokens, site).
    sites.sort_by_key(|s| std::cmp::Reverse((s.avoidable_tokens, s.avoidable)));
    Ok(AuditReport {
        sources: read.sources,
        sites,
        events: read.events,
        unseen: read.unseen,
        notes: read.notes,
    })
}

/// What the audited files hold together: each site's figures merged, the evidence for
/// the rules, the regret events, the unseen entries, the files and their notes.
#[derive(Default)]
struct ReadAll {
    merged: HashMap<(String, Retention), SiteStats>,
    evidence: Summary,
    events: Vec<SourcedEvent>,
    unseen: u64,
    sources: Vec<String>,
    notes: Vec<String>,
}

/// Reads every file of `args` with the rules and policy.
fn read_all(
    args: &AuditArgs,
    rules: Option<&Rules>,
    policy: Option<&Policy>,
) -> Result<ReadAll, AuditError> {
    let mut read = ReadAll::default();
    let journal = args.observe.journal_options()?;
    for file in &args.files {
        let loaded = load_audited(file, rules, policy, args.observe.format, &journal)?;
        if let Some(summary) = &loaded.evidence {
            read.evidence.merge(summary);
        }
        read.notes.extend(loaded.note);
        let ledger = loaded.ledger;
        let source = file.display().to_string();
        for s in ledger.sites() {
            match read.merged.get_mut(&(s.site.clone(), s.class)) {
                Some(m) => m.merge(&s),
                None => {
                    read.merged.insert((s.site.clone(), s.class), s);
                }
            }
        }
        read.events
            .extend(ledger.regrets().iter().map(|e| SourcedEvent {
                source: source.clone(),
                event: e.clone(),
            }));
        read.unseen += ledger.unseen();
        read.sources.push(source);
    }
    Ok(read)
}

/// Per site: avoidable events, and the distinct entries (per file) they name with the
/// most any of their events cost to re-fetch.
fn avoided_by_site<'a>(
    events: &'a [SourcedEvent],
    tiers: &[Tier],
) -> HashMap<(String, Retention), Avoided<'a>> {
    let mut avoided: HashMap<(String, Retention), Avoided<'_>> = HashMap::new();
    for e in events.iter().filter(|e| avoidable(&e.event, tiers)) {
        let slot = avoided
            .entry((site_key(&e.event.site), e.event.class))
            .or_default();
        slot.0 += 1;
        let cost = slot
            .1
            .entry((e.source.as_str(), e.event.evicted))
            .or_default();
        *cost = (*cost).max(e.event.cost_tokens);
    }
    avoided
}

/// One site's audit: its avoidable events and tokens, its rule (an imported site) with
/// the references evidence and the replayed suggestion, or else a suggestion from its
/// regret events.
fn site_audit(
    stats: SiteStats,
    avoided: &HashMap<(String, Retention), Avoided<'_>>,
    by_rule: &HashMap<String, Evidence>,
    replayed: &[Suggestion],
    tiers: &[Tier],
) -> SiteAudit {
    let (avoidable, entries, avoidable_tokens) = avoided
        .get(&(stats.site.clone(), stats.class))
        .map_or((0, 0, 0), |(n, ids)| {
            (*n, ids.len() as u64, ids.values().sum::<u64>())
        });
    let rule = stats
        .site
        .strip_prefix("import:")
        .and_then(|s| s.split_once('/'))
        .map(|(_, rule)| rule.to_owned());
    let (references, suggestion) = match &rule {
        Some(rule) => (
            by_rule.get(rule).copied(),
            replayed
                .iter()
                .find(|s| &s.rule == rule)
                .map(|s| Suggested {
                    to: s.to,
                    strength: s.strength,
                    evidence: format!(
                        "{}; {} regret events re-fetching {} tokens",
                        s.evidence, stats.regrets, stats.regret_tokens
                    ),
                }),
        ),
        None => (None, regret_suggestion(&stats, entries, tiers)),
    };
    SiteAudit {
        stats,
        avoidable,
        avoidable_tokens,
        rule,
        references,
        suggestion,
    }
}

/// A site's avoidable regret events, and the distinct entries (file, id) they name with
/// the most any of their events cost to re-fetch.
type Avoided<'a> = (u64, HashMap<(&'a str, EntryId), u64>);

fn by_tier(m: &BTreeMap<NonZeroU8, u64>) -> String {
    if m.is_empty() {
        return "0".to_owned();
    }
    m.iter()
        .map(|(t, n)| format!("t{t}:{n}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The report as text: the per-site table (most regret first), then each suggested class
/// change with its evidence and the first regret events behind it.
pub fn render_text(report: &AuditReport) -> String {
    let mut out = format!(
        "# favur-context audit: {} file(s), {} regret event(s)\n\n",
        report.sources.len(),
        report.events.len()
    );
    out.push_str("| site | class | entries | tokens | in view | kept | summarized | dropped | avoidable regret | avoidable tokens | regret | re-fetch tokens | recall / repeat / lost ref |\n");
    out.push_str("|---|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---|\n");
    for s in &report.sites {
        let st = &s.stats;
        let kind = |k: &str| st.regret_kinds.get(k).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} / {} / {} |",
            st.site,
            st.class,
            st.entries,
            st.tokens,
            st.tokens_in_view,
            st.kept,
            by_tier(&st.summarized),
            by_tier(&st.dropped),
            s.avoidable,
            s.avoidable_tokens,
            st.regrets,
            st.regret_tokens,
            kind("recall"),
            kind("repeated call"),
            kind("lost reference"),
        );
    }
    for note in &report.notes {
        let _ = writeln!(out, "\nNote: {note}.");
    }
    if report.unseen > 0 {
        let _ = writeln!(
            out,
            "\n{} entries were not in the files (evicted originals) and are not counted.",
            report.unseen
        );
    }
    let suggested: Vec<&SiteAudit> = report
        .sites
        .iter()
        .filter(|s| s.suggestion.is_some())
        .collect();
    if suggested.is_empty() {
        out.push_str("\nNo class change suggested: no site reaches the evidence thresholds.\n");
        return out;
    }
    out.push_str("\n## Suggested class changes\n");
    for s in suggested {
        let Some(sug) = &s.suggestion else { continue };
        let _ = writeln!(
            out,
            "\n- `{}`: {} -> {} ({} evidence: {})",
            s.stats.site, s.stats.class, sug.to, sug.strength, sug.evidence
        );
        let behind = report
            .events
            .iter()
            .filter(|e| site_key(&e.event.site) == s.stats.site && e.event.class == s.stats.class);
        for e in behind.take(3) {
            let _ = writeln!(out, "  - {}: {}", e.source, e.event);
        }
    }
    out
}

/// The report as pretty-printed JSON.
pub fn render_json(report: &AuditReport) -> String {
    serde_json::to_string_pretty(report).unwrap_or_else(|e| {
        serde_json::json!({"error": format!("cannot serialize the report: {e}")}).to_string()
    })
}

#[cfg(test)]
mod tests;
