//! Aggregated figures, the side-by-side table and the misclassification report.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::num::NonZeroU8;

use favur_context::Retention;
use favur_context::import::rules::RuleRef;
use favur_context::import::rules::Rules;

use crate::cache_bill::CompactionCache;
use crate::replay::{Fate, Prepared, Run, class_of, rule_of};
use crate::spans::SpanTally;
pub use crate::suggest::{SUGGEST, Suggestion, misclassification, suggestions};
pub(crate) use crate::suggest::{alike, strength};

/// Share of a reused token's price that is paid: reused prefix tokens cost 10%.
///
/// ```
/// assert_eq!(favur_context_cli::report::REUSED_PRICE, 0.10);
/// ```
pub const REUSED_PRICE: f64 = 0.10;

/// The cost model, as printed with every table.
///
/// ```
/// assert!(favur_context_cli::report::COST_MODEL.contains("0.10"));
/// ```
pub const COST_MODEL: &str = "cost model: each request's tokens cost 1 each, except the unchanged prefix \
of the previous request (whole messages, compared byte for byte after rendering), which costs 0.10 each \
(a prompt cache hit); effective cost = sum over requests of tokens x (1 - 0.9 x reused share)";

/// How many references there were and how many survived.
///
/// ```
/// use favur_context_cli::report::Tally;
/// let t = Tally { total: 4, survived: 3 };
/// assert_eq!(t.share(), Some(0.75));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// References counted.
    pub total: u64,
    /// Of those, present in the request.
    pub survived: u64,
}

impl Tally {
    /// The survival share, if any reference was counted.
    ///
    /// ```
    /// assert_eq!(favur_context_cli::report::Tally::default().share(), None);
    /// ```
    pub fn share(&self) -> Option<f64> {
        (self.total > 0).then(|| self.survived as f64 / self.total as f64)
    }

    pub(crate) fn add(&mut self, survived: bool) {
        self.total += 1;
        self.survived += u64::from(survived);
    }

    pub(crate) fn merge(&mut self, other: &Tally) {
        self.total += other.total;
        self.survived += other.survived;
    }
}

/// Per-rule evidence for the misclassification report.
///
/// ```
/// let e = favur_context_cli::report::RuleEvidence::default();
/// assert_eq!(e.entries, 0);
/// ```
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
///
/// ```
/// use favur_context_cli::report::Summary;
/// let s = Summary::default();
/// assert_eq!(s.mean_tokens(), 0.0);
/// ```
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
    ///
    /// ```
    /// # use favur_context::import::Format;
    /// # use favur_context::import::rules::Rules;
    /// # use favur_context_cli::replay::Prepared;
    /// # use favur_context_cli::transcript::ClassifiedTranscript;
    /// # let rules = Rules::from_toml("[[rule]]\nname = \"all\"\nclass = \"fuzzy\"\n")?;
    /// # let json = serde_json::json!([
    /// #     {"role": "user", "content": "Fix it."},
    /// #     {"role": "assistant", "content": "Looking at src/parser.rs."},
    /// #     {"role": "user", "content": "Go on."},
    /// #     {"role": "assistant", "content": "Done."},
    /// # ]);
    /// # let prepared = Prepared::new(ClassifiedTranscript::from_value("t", Format::OpenAi, &json, &rules)?);
    /// use favur_context_cli::replay::replay;
    /// use favur_context_cli::report::Summary;
    /// use favur_context_cli::strategy::NoCompaction;
    /// let run = replay(&prepared, &mut NoCompaction, None, &mut |_, _| Ok(()))?;
    /// let s = Summary::of(&run, &prepared);
    /// assert_eq!((s.requests, s.refused), (2, 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
    ///
    /// ```
    /// use favur_context_cli::report::Summary;
    /// let mut a = Summary { requests: 2, total_tokens: 10, ..Summary::default() };
    /// a.merge(&Summary { requests: 1, total_tokens: 20, ..Summary::default() });
    /// assert_eq!(a.mean_tokens(), 10.0);
    /// ```
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
    ///
    /// ```
    /// let s = favur_context_cli::report::Summary { requests: 2, total_tokens: 30, ..Default::default() };
    /// assert_eq!(s.mean_tokens(), 15.0);
    /// ```
    pub fn mean_tokens(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.total_tokens as f64 / self.requests as f64
        }
    }

    /// Token-weighted share of request tokens that were an unchanged prefix.
    ///
    /// ```
    /// let s = favur_context_cli::report::Summary { total_tokens: 100, reused_tokens: 25.0, ..Default::default() };
    /// assert_eq!(s.reuse_share(), 0.25);
    /// ```
    pub fn reuse_share(&self) -> f64 {
        if self.total_tokens == 0 {
            0.0
        } else {
            self.reused_tokens / self.total_tokens as f64
        }
    }

    /// Mean over requests of the share of their tokens the cached prefix covers (a cache
    /// with Anthropic's rules, the breakpoints placed where the prefix is stable).
    ///
    /// ```
    /// let s = favur_context_cli::report::Summary { requests: 4, cached_shares: 3.0, ..Default::default() };
    /// assert_eq!(s.cached_share(), 0.75);
    /// ```
    pub fn cached_share(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.cached_shares / self.requests as f64
        }
    }

    /// Effective cost in tokens: reused tokens at [`REUSED_PRICE`], the rest at 1.
    ///
    /// ```
    /// let s = favur_context_cli::report::Summary { total_tokens: 100, reused_tokens: 50.0, ..Default::default() };
    /// assert!((s.effective_cost() - 55.0).abs() < 1e-9);
    /// ```
    pub fn effective_cost(&self) -> f64 {
        self.total_tokens as f64 - (1.0 - REUSED_PRICE) * self.reused_tokens
    }

    /// Compactions (of any tier) per 100 requests.
    ///
    /// ```
    /// let mut s = favur_context_cli::report::Summary { requests: 200, ..Default::default() };
    /// s.compactions.insert(std::num::NonZeroU8::new(1), 3);
    /// assert_eq!(s.compactions_per_100(), 1.5);
    /// ```
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
///
/// ```
/// use favur_context_cli::report::{side_by_side, Row, Summary};
/// let t = side_by_side(&[Row { transcript: "t".into(), summaries: vec![Summary { label: "policy".into(), ..Summary::default() }] }]);
/// assert!(t.contains("| t | policy |"));
/// ```
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
///
/// ```
/// use favur_context::import::rules::Rules;
/// use favur_context_cli::report::{breakdown, Summary};
/// let rules = Rules::from_toml("[[rule]]\nname = \"a\"\nclass = \"fuzzy\"\n")?;
/// let t = breakdown(&[Summary { label: "policy".into(), ..Summary::default() }], &rules);
/// assert!(t.contains("forgettable"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
