//! What a compaction reports (and what stops a request): the report, its fallbacks, the
//! limit error and the commit errors; the tracing event it is emitted as.

use std::fmt;
use std::num::NonZeroU8;

use serde::Serialize;

use crate::compact::plan::{ByClass, ClassOutcome};
use crate::history::RecordError;
use crate::model::entry::EntryId;
use crate::model::retention::Retention;

/// The request would carry at least the limit even after the highest tier reached:
/// it is refused, and nothing is lost (the history and what the compaction did stay).
///
/// ```
/// use favur_context::{strict, Compactor, History, Policy};
/// let mut h = History::new();
/// h.append(strict!(user: "{}", "word ".repeat(400))); // in flight, cannot be compacted
/// let mut c = Compactor::new(Policy::for_window(1_000).unwrap());
/// let err = *c.prepare(&mut h).unwrap_err().limit().unwrap();
/// assert_eq!((err.window, err.limit), (1_000, 500));
/// assert!(err.tokens >= 500);
/// assert_eq!(h.len(), 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the request would carry {tokens} tokens, at or over the limit of {limit} tokens ({window}-token window), even after compaction"
)]
pub struct LimitExceeded {
    /// Tokens the request would carry.
    pub tokens: u64,
    /// The window.
    pub window: u64,
    /// The limit, in tokens.
    pub limit: u64,
}

/// A plan could not be committed. `E` is the store's error.
///
/// ```
/// use favur_context::compact::CommitError;
/// use favur_context::{forgettable, fuzzy, Compactor, History, Policy};
/// let mut h = History::new();
/// h.append(forgettable!(user: "old"));
/// h.append(fuzzy!(assistant: "ok"));
/// let mut c = Compactor::new(Policy::default());
/// let plan = favur_context::compact::Plan::new(&h, c.policy(), std::num::NonZeroU8::MIN);
/// h.append(fuzzy!(user: "more")); // the history moved on
/// assert_eq!(c.commit(&mut h, plan, Vec::new()).unwrap_err(), CommitError::Stale);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CommitError<E = RecordError> {
    /// The history changed since the plan was made; plan again.
    #[error("the history changed since the plan was made; plan again")]
    Stale,
    /// The number of summary outcomes is not the number of runs.
    #[error("{given} summary outcomes given for {runs} runs")]
    Outcomes {
        /// Runs in the plan.
        runs: usize,
        /// Outcomes given.
        given: usize,
    },
    /// The store did not record the compaction (a write failed; or, a bug, the record
    /// did not apply): nothing changed.
    #[error("the store did not record the compaction: {0}")]
    Store(#[source] E),
}

/// A summarizer failure the engine recovered from with the built-in summarizer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fallback {
    /// The summary written by the built-in summarizer instead.
    pub summary: EntryId,
    /// What the summarizer said.
    pub error: String,
}

/// What one compaction did. Returned by the engine and emitted as a `tracing` event
/// (target `favur_context::compaction`, level INFO).
///
/// ```
/// use favur_context::{forgettable, fuzzy, Compactor, History, Policy};
/// let mut h = History::new();
/// h.append(forgettable!(user: "{}", "ls output ".repeat(100)));
/// h.append(fuzzy!(assistant: "seen"));
/// let mut c = Compactor::new(Policy::for_window(2_000).unwrap());
/// let report = c.compact(&mut h).unwrap().unwrap();
/// assert_eq!(report.tier.get(), 2); // usage was above 10% of the window
/// assert!(report.usage_after < report.usage_before);
/// assert_eq!(report.classes.forgettable.dropped.entries, 1);
/// println!("{report}");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompactionReport {
    /// The tier applied.
    pub tier: NonZeroU8,
    /// Request tokens before.
    pub usage_before: u64,
    /// Request tokens after.
    pub usage_after: u64,
    /// The window.
    pub window: u64,
    /// Per class: entries and tokens kept, summarized, dropped.
    pub classes: ByClass<ClassOutcome>,
    /// The summaries written, in view order.
    pub summaries: Vec<EntryId>,
    /// Entries whose form changed (calls-only, placeholder, capped).
    pub reformed: usize,
    /// Calls made to the configured summarizer (one per run).
    pub summarizer_calls: usize,
    /// Runs where it failed and the built-in summarizer wrote the summary.
    pub fallbacks: Vec<Fallback>,
    /// Tokens at the start of the request the compaction left as they were (the prefix a
    /// prompt cache still holds; see [`Plan::prefix_tokens`](crate::compact::Plan::prefix_tokens)).
    pub prefix_tokens: u64,
    /// Entries taken first because a later entry carries the same supersession key (see
    /// [`Plan::superseded`](crate::compact::Plan::superseded)).
    pub superseded: Vec<EntryId>,
}

impl CompactionReport {
    /// Usage before, as a fraction of the window.
    ///
    /// ```
    /// # use favur_context::*;
    /// # let mut h = History::new();
    /// # h.append(forgettable!(user: "{}", "x ".repeat(300)));
    /// # h.append(fuzzy!(assistant: "ok"));
    /// # let r = Compactor::new(Policy::for_window(1_000).unwrap()).compact(&mut h).unwrap().unwrap();
    /// assert!(r.usage_fraction_before() > r.usage_fraction_after());
    /// ```
    pub fn usage_fraction_before(&self) -> f64 {
        self.usage_before as f64 / self.window.max(1) as f64
    }

    /// Usage after, as a fraction of the window.
    ///
    /// ```
    /// # use favur_context::*;
    /// # let mut h = History::new();
    /// # h.append(forgettable!(user: "{}", "x ".repeat(300)));
    /// # h.append(fuzzy!(assistant: "ok"));
    /// # let r = Compactor::new(Policy::for_window(1_000).unwrap()).compact(&mut h).unwrap().unwrap();
    /// assert!(r.usage_fraction_after() < 0.5);
    /// ```
    pub fn usage_fraction_after(&self) -> f64 {
        self.usage_after as f64 / self.window.max(1) as f64
    }
}

impl fmt::Display for CompactionReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "tier {}: usage {} -> {} tokens ({:.1}% -> {:.1}% of {})",
            self.tier,
            self.usage_before,
            self.usage_after,
            100.0 * self.usage_fraction_before(),
            100.0 * self.usage_fraction_after(),
            self.window
        )?;
        writeln!(
            f,
            "  {:<12} {:>16} {:>16} {:>16}",
            "class", "kept", "summarized", "dropped"
        )?;
        for class in Retention::ALL {
            let c = self.classes.get(class);
            let cell =
                |x: &crate::compact::plan::Figures| format!("{} ({} tok)", x.entries, x.tokens);
            writeln!(
                f,
                "  {:<12} {:>16} {:>16} {:>16}",
                class.as_str(),
                cell(&c.kept),
                cell(&c.summarized),
                cell(&c.dropped)
            )?;
        }
        write!(
            f,
            "  summaries written: {}, reformed: {}, summarizer calls: {}, fallbacks: {}, prefix kept: {} tokens ({:.1}% of the request before)",
            self.summaries.len(),
            self.reformed,
            self.summarizer_calls,
            self.fallbacks.len(),
            self.prefix_tokens,
            100.0 * self.prefix_tokens as f64 / self.usage_before.max(1) as f64
        )?;
        if !self.superseded.is_empty() {
            let ids: Vec<String> = self.superseded.iter().map(ToString::to_string).collect();
            write!(f, "\n  superseded: {}", ids.join(", "))?;
        }
        for fb in &self.fallbacks {
            write!(
                f,
                "\n  fallback: summary {} written by the built-in summarizer ({})",
                fb.summary, fb.error
            )?;
        }
        Ok(())
    }
}

pub(crate) fn emit(report: &CompactionReport) {
    tracing::info!(
        target: "favur_context::compaction",
        tier = report.tier.get(),
        usage_before = report.usage_before,
        usage_after = report.usage_after,
        window = report.window,
        summaries = report.summaries.len(),
        reformed = report.reformed,
        summarizer_calls = report.summarizer_calls,
        fallbacks = report.fallbacks.len(),
        prefix_tokens = report.prefix_tokens,
        superseded = report.superseded.len(),
        forgettable_kept = report.classes.forgettable.kept.entries,
        forgettable_summarized = report.classes.forgettable.summarized.entries,
        forgettable_dropped = report.classes.forgettable.dropped.entries,
        fuzzy_kept = report.classes.fuzzy.kept.entries,
        fuzzy_summarized = report.classes.fuzzy.summarized.entries,
        fuzzy_dropped = report.classes.fuzzy.dropped.entries,
        strict_kept = report.classes.strict.kept.entries,
        strict_summarized = report.classes.strict.summarized.entries,
        strict_dropped = report.classes.strict.dropped.entries,
        "compaction"
    );
}
