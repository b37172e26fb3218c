//! Aggregated figures, the side-by-side table and the misclassification report.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::num::NonZeroU8;

use favur_context::Retention;
use favur_context::import::rules::RuleRef;
use favur_context::import::rules::Rules;

use crate::cache_bill::CompactionCache;
use crate::replay::{Fate, Prepared, Run, class_of, rule_of};
use crate::span_tally::SpanTally;
pub use crate::tally::Tally;

/// Share of a reused token's price that is paid: reused prefix tokens cost 10%.
pub const REUSED_PRICE: f64 = 0.10;

/// The cost model, as printed with every table.
pub const COST_MODEL: &str = "cost model: each request's tokens cost 1 each, except the unchanged prefix \
of the previous request (whole messages, compared byte for byte after rendering), which costs 0.10 each \
(a prompt cache hit); effective cost = sum over requests of tokens x (1 - 0.9 x reused share)";

/// Per-rule evidence for the misclassification report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RuleEvidence {
    /// Messages this rule classified.
    pub entries: u64,
    /// Of those, tool outputs.
    pub outputs: u64,
    /// Tool outputs no later assistant message referenced.
    pub never_referenced: u64,
    /// References whose source this rule classified.
    pub refs: Tally,
    /// Lost references whose source was summarized at the time.
    pub lost_summarized: u64,
    /// Lost references whose source was dropped (or masked to a placeholder).
    pub lost_dropped: u64,
}

impl RuleEvidence {
    fn merge(&mut self, o: &RuleEvidence) {
        self.entries += o.entries;
        self.outputs += o.outputs;
        self.never_referenced += o.never_referenced;
        self.refs.merge(&o.refs);
        self.lost_summarized += o.lost_summarized;
        self.lost_dropped += o.lost_dropped;
    }
}

/// The figures of one strategy on one or more transcripts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Strategy label.
    pub label: String,
    /// Requests replayed.
    pub requests: u64,
    /// Requests the strategy refused.
    pub refused: u64,
    /// Sum of request tokens.
    pub total_tokens: u64,
    /// Largest request.
    pub peak_tokens: u64,
    /// Compactions by tier (`None`: a baseline's trim or mask).
    pub compactions: BTreeMap<Option<NonZeroU8>, u64>,
    /// Summarizer calls.
    pub summarizer_calls: u64,
    /// Summarizer fallbacks.
    pub fallbacks: u64,
    /// Sum over requests of tokens x reused share.
    pub reused_tokens: f64,
    /// Sum over requests of the share of their tokens the cached prefix covers.
    pub cached_shares: f64,
    /// All references.
    pub refs: Tally,
    /// References by the class of their source.
    pub by_class: [Tally; 3],
    /// Evidence by the rule of their source.
    pub by_rule: BTreeMap<RuleRef, RuleEvidence>,
    /// Largest difference, over the rendered requests, between usage and the count of
    /// the rendered request.
    pub max_usage_gap: u64,
    /// Tool outputs shown verbatim without their command, summed over requests.
    pub commandless: u64,
    /// Exact-text spans ([`spans`](crate::spans)): overall and by the class of the source.
    pub spans: SpanTally,
    /// What the requests right after a compaction re-billed and read from the cache.
    pub cache: CompactionCache,
}

impl Summary {
    /// Aggregates one run.
    pub fn of(run: &Run, prepared: &Prepared) -> Summary {
        let mut s = Summary {
            label: run.label.clone(),
            ..Summary::default()
        };
        for step in &run.steps {
            s.requests += 1;
            s.refused += u64::from(step.refused);
            s.total_tokens += step.tokens;
            s.peak_tokens = s.peak_tokens.max(step.tokens);
            s.reused_tokens += step.tokens as f64 * step.reuse;
            s.cached_shares += step.cached;
            if step.rendered > 0 {
                s.max_usage_gap = s.max_usage_gap.max(step.tokens.abs_diff(step.rendered));
            }
            s.commandless += step.commandless;
            s.spans.add_step(step, prepared);
            s.cache.add_step(step);
            if let Some(e) = step.event {
                *s.compactions.entry(e.tier).or_default() += 1;
                s.summarizer_calls += u64::from(e.summarizer_calls);
                s.fallbacks += u64::from(e.fallbacks);
            }
            for r in &step.refs {
                s.refs.add(r.survived);
                if let Some(class) = class_of(prepared, r.source) {
                    s.by_class[class.index()].add(r.survived);
                }
                if let Some(rule) = rule_of(prepared, r.source) {
                    let ev = s.by_rule.entry(rule).or_default();
                    ev.refs.add(r.survived);
                    if !r.survived {
                        match r.fate {
                            Fate::Summarized => ev.lost_summarized += 1,
                            Fate::Dropped | Fate::Placeholder => ev.lost_dropped += 1,
                            Fate::Verbatim => {}
                        }
                    }
                }
            }
        }
        let t = prepared.transcript();
        for (i, d) in t.decisions.iter().enumerate() {
            let ev = s.by_rule.entry(d.rule).or_default();
            ev.entries += 1;
            if t.results.get(i).copied().unwrap_or(false) {
                ev.outputs += 1;
                ev.never_referenced += u64::from(!prepared.referenced_later(i));
            }
        }
        s
    }

    /// Adds another summary of the same strategy (for totals).
    pub fn merge(&mut self, o: &Summary) {
        self.requests += o.requests;
        self.refused += o.refused;
        self.total_tokens += o.total_tokens;
        self.peak_tokens = self.peak_tokens.max(o.peak_tokens);
        for (t, n) in &o.compactions {
            *self.compactions.entry(*t).or_default() += n;
        }
        self.summarizer_calls += o.summarizer_calls;
        self.fallbacks += o.fallbacks;
        self.reused_tokens += o.reused_tokens;
        self.cached_shares += o.cached_shares;
        self.max_usage_gap = self.max_usage_gap.max(o.max_usage_gap);
        self.commandless += o.commandless;
        self.spans.merge(&o.spans);
        self.cache.merge(&o.cache);
        self.refs.merge(&o.refs);
        for (a, b) in self.by_class.iter_mut().zip(o.by_class.iter()) {
            a.merge(b);
        }
        for (r, e) in &o.by_rule {
            self.by_rule.entry(*r).or_default().merge(e);
        }
    }

    /// Mean request tokens.
    pub fn mean_tokens(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.total_tokens as f64 / self.requests as f64
        }
    }

    /// Token-weighted share of request tokens that were an unchanged prefix.
    pub fn reuse_share(&self) -> f64 {
        if self.total_tokens == 0 {
            0.0
        } else {
            self.reused_tokens / self.total_tokens as f64
        }
    }

    /// Mean over requests of the share of their tokens the cached prefix covers (a cache
    /// with Anthropic's rules, the breakpoints placed where the prefix is stable).
    pub fn cached_share(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.cached_shares / self.requests as f64
        }
    }

    /// Effective cost in tokens: reused tokens at [`REUSED_PRICE`], the rest at 1.
    pub fn effective_cost(&self) -> f64 {
        self.total_tokens as f64 - (1.0 - REUSED_PRICE) * self.reused_tokens
    }

    /// Compactions (of any tier) per 100 requests.
    pub fn compactions_per_100(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            100.0 * self.compactions.values().sum::<u64>() as f64 / self.requests as f64
        }
    }

    fn compactions_cell(&self) -> String {
        if self.compactions.is_empty() {
            return "0".to_owned();
        }
        self.compactions
            .iter()
            .map(|(t, n)| match t {
                None => format!("{n}"),
                Some(t) => format!("t{t}:{n}"),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_owned(), |x| format!("{:.1}%", x * 100.0))
}

/// A tally as `97.0% (97/100)`.
fn cell(t: &Tally) -> String {
    format!("{} ({}/{})", pct(t.share()), t.survived, t.total)
}

/// One row group of the side-by-side table: a transcript (or "total") and the summary of
/// each strategy on it, policy first. See [`side_by_side`] for an example.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Transcript id, or "TOTAL".
    pub transcript: String,
    /// The summaries, one per strategy.
    pub summaries: Vec<Summary>,
}

/// The side-by-side table, as Markdown.
pub fn side_by_side(rows: &[Row]) -> String {
    let mut out = String::new();
    out.push_str("| transcript | strategy | requests | mean tok | peak tok | compactions | per 100 req | summarizer calls | cache reuse | cached prefix | effective cost (tok) | refs kept | spans kept | max \\|usage − rendered\\| | outputs w/o command |\n");
    out.push_str("|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for row in rows {
        for s in &row.summaries {
            let refused = if s.refused > 0 {
                format!(" ({} refused)", s.refused)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "| {} | {} | {}{} | {:.0} | {} | {} | {:.1} | {} | {:.1}% | {:.1}% | {:.0} | {} ({}/{}) | {} | {} | {} |",
                row.transcript,
                s.label,
                s.requests,
                refused,
                s.mean_tokens(),
                s.peak_tokens,
                s.compactions_cell(),
                s.compactions_per_100(),
                s.summarizer_calls,
                s.reuse_share() * 100.0,
                s.cached_share() * 100.0,
                s.effective_cost(),
                pct(s.refs.share()),
                s.refs.survived,
                s.refs.total,
                cell(&s.spans.all),
                s.max_usage_gap,
                s.commandless,
            );
        }
    }
    out
}

/// Reference survival by the class and by the rule of the source, one column per strategy.
pub fn breakdown(totals: &[Summary], rules: &Rules) -> String {
    let mut out = String::new();
    out.push_str("| source | ");
    out.push_str(
        &totals
            .iter()
            .map(|s| s.label.as_str())
            .collect::<Vec<_>>()
            .join(" | "),
    );
    out.push_str(" |\n|---|");
    out.push_str(&"---:|".repeat(totals.len()));
    out.push('\n');
    for class in Retention::ALL {
        let _ = write!(out, "| class {class} |");
        for s in totals {
            let _ = write!(out, " {} |", cell(&s.by_class[class.index()]));
        }
        out.push('\n');
    }
    for class in Retention::ALL {
        let _ = write!(out, "| spans, class {class} |");
        for s in totals {
            let _ = write!(out, " {} |", cell(&s.spans.by_class[class.index()]));
        }
        out.push('\n');
    }
    let mut keys: Vec<RuleRef> = totals
        .iter()
        .flat_map(|s| s.by_rule.keys().copied())
        .collect();
    keys.sort();
    keys.dedup();
    // Rules whose entries were never the source of a reference add nothing here.
    keys.retain(|k| {
        totals
            .iter()
            .any(|s| s.by_rule.get(k).is_some_and(|e| e.refs.total > 0))
    });
    for key in keys {
        let _ = write!(out, "| rule `{}` |", rules.rule_name(key));
        for s in totals {
            let t = s.by_rule.get(&key).map(|e| e.refs).unwrap_or_default();
            let _ = write!(out, " {} |", cell(&t));
        }
        out.push('\n');
    }
    out
}

/// The summary of the strategy whose label starts with `name`.
fn by_name<'a>(summaries: &'a [Summary], name: &str) -> Option<&'a Summary> {
    summaries.iter().find(|s| s.label.starts_with(name))
}

/// `a / b` as `0.68x`, or a dash when `b` is missing or 0.
fn ratio(a: f64, b: Option<f64>) -> String {
    match b {
        Some(b) if b > 0.0 => format!("{:.3}x", a / b),
        _ => "–".to_owned(),
    }
}

/// The policy's cost per compaction, per transcript (the first summary of each row is the
/// policy's), as Markdown.
pub fn cache_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| transcript | compactions | re-billed tok (cache writes) | re-billed per compaction | cache reads at compactions | effective cost (tok) | × no compaction | × trim-oldest |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for row in rows {
        let Some(p) = row.summaries.first() else {
            continue;
        };
        let cost = p.effective_cost();
        let none = by_name(&row.summaries, "no compaction").map(Summary::effective_cost);
        let trim = by_name(&row.summaries, "trim-oldest").map(Summary::effective_cost);
        let c = &p.cache;
        let _ = writeln!(
            out,
            "| {} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {} | {} |",
            row.transcript,
            c.compactions,
            c.rebilled,
            c.rebilled_each(),
            c.reads,
            cost,
            ratio(cost, none),
            ratio(cost, trim),
        );
    }
    out
}

#[cfg(test)]
mod tests;
