//! What a compaction costs the prompt cache: the request right after it is billed in full
//! from its first changed item on (a cache write), and only the unchanged prefix before
//! that item is read from the cache at [`REUSED_PRICE`](crate::report::REUSED_PRICE).
//!
//! The figures use the replay's effective-cost model (whole rendered messages compared
//! byte for byte with the previous request): for the request after a compaction of
//! `tokens` tokens whose unchanged prefix is the share `reuse`, the cache reads are
//! `tokens x reuse` and the re-billed tokens (cache writes) `tokens x (1 - reuse)`.

use std::fmt::Write as _;
use std::num::NonZeroU8;

use crate::replay::{Run, Step};
use crate::report::{Row, Summary};

/// The cache figures of the requests right after a compaction, summed.
///
/// ```
/// use favur_context_cli::cache_bill::CompactionCache;
/// use favur_context_cli::replay::Step;
/// use favur_context_cli::strategy::Event;
/// let mut c = CompactionCache::default();
/// let event = Some(Event { tier: std::num::NonZeroU8::new(2), summarizer_calls: 1, fallbacks: 0 });
/// c.add_step(&Step { tokens: 1000, reuse: 0.25, event, ..Step::default() });
/// c.add_step(&Step { tokens: 1000, reuse: 0.99, ..Step::default() }); // no compaction: not counted
/// assert_eq!((c.compactions, c.rebilled, c.reads), (1, 750.0, 250.0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CompactionCache {
    /// Compactions (requests right after one).
    pub compactions: u64,
    /// Tokens re-billed: those after the unchanged prefix (the cache writes).
    pub rebilled: f64,
    /// Tokens of the unchanged prefix (the cache reads).
    pub reads: f64,
}

impl CompactionCache {
    /// Counts `step` if a compaction came right before it.
    ///
    /// See [`CompactionCache`] for an example.
    pub fn add_step(&mut self, step: &Step) {
        if let Some(bill) = Bill::of(0, step) {
            self.compactions += 1;
            self.rebilled += bill.rebilled;
            self.reads += bill.reads;
        }
    }

    /// Adds another summary's figures (for totals).
    ///
    /// ```
    /// use favur_context_cli::cache_bill::CompactionCache;
    /// let mut a = CompactionCache { compactions: 1, rebilled: 10.0, reads: 2.0 };
    /// a.merge(&a.clone());
    /// assert_eq!(a.compactions, 2);
    /// ```
    pub fn merge(&mut self, o: &CompactionCache) {
        self.compactions += o.compactions;
        self.rebilled += o.rebilled;
        self.reads += o.reads;
    }

    /// Mean tokens re-billed per compaction (0 without any).
    ///
    /// ```
    /// use favur_context_cli::cache_bill::CompactionCache;
    /// assert_eq!(CompactionCache { compactions: 2, rebilled: 10.0, reads: 0.0 }.rebilled_each(), 5.0);
    /// ```
    pub fn rebilled_each(&self) -> f64 {
        if self.compactions == 0 {
            0.0
        } else {
            self.rebilled / self.compactions as f64
        }
    }
}

/// One compaction's cache figures: what the request right after it re-billed and read.
///
/// ```
/// use favur_context_cli::cache_bill::Bill;
/// use favur_context_cli::replay::Step;
/// assert_eq!(Bill::of(0, &Step::default()), None); // no compaction before it
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bill {
    /// The request number in its transcript (from 0).
    pub step: usize,
    /// The tier that fired (`None` for a baseline).
    pub tier: Option<NonZeroU8>,
    /// The request's tokens.
    pub tokens: u64,
    /// Tokens after the unchanged prefix (cache writes).
    pub rebilled: f64,
    /// Tokens of the unchanged prefix (cache reads).
    pub reads: f64,
}

impl Bill {
    /// The figures of request number `n`, `step`, if a compaction came right before it.
    ///
    /// See [`Bill`] for an example.
    pub fn of(n: usize, step: &Step) -> Option<Bill> {
        let event = step.event?;
        let tokens = step.tokens as f64;
        Some(Bill {
            step: n,
            tier: event.tier,
            tokens: step.tokens,
            rebilled: tokens * (1.0 - step.reuse),
            reads: tokens * step.reuse,
        })
    }

    /// Every compaction of `run`, in order.
    ///
    /// ```
    /// use favur_context_cli::cache_bill::Bill;
    /// assert!(Bill::all(&favur_context_cli::replay::Run::default()).is_empty());
    /// ```
    pub fn all(run: &Run) -> Vec<Bill> {
        let steps = run.steps.iter().enumerate();
        steps.filter_map(|(n, s)| Bill::of(n, s)).collect()
    }
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
///
/// ```
/// use favur_context_cli::cache_bill::{cache_table, CompactionCache};
/// use favur_context_cli::report::{Row, Summary};
/// let policy = Summary { label: "policy".into(), total_tokens: 60, cache: CompactionCache { compactions: 1, rebilled: 40.0, reads: 5.0 }, ..Summary::default() };
/// let none = Summary { label: "no compaction".into(), total_tokens: 100, ..Summary::default() };
/// let t = cache_table(&[Row { transcript: "t".into(), summaries: vec![policy, none] }]);
/// assert!(t.contains("| t | 1 | 40 | 40 | 5 | 60 | 0.600x | – |"), "{t}");
/// ```
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
