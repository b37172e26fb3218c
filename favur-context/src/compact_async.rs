//! Async compaction steps shared by plain and journaled histories.

use crate::compact::{CompactionReport, Compactor};
use crate::history::History;
use crate::journal::{JournalError, JournaledHistory};
use crate::plan::Plan;
use crate::summarize::{AsyncSummarizer, SummarizeError, SummaryRequest};

impl<S: AsyncSummarizer> Compactor<S> {
    /// Summarizes every run of `plan` with the async summarizer, one awaited call per
    /// run, in the order of [`Plan::runs`]: the outcomes
    /// [`commit`](Compactor::commit) takes.
    ///
    /// ```
    /// use favur_context::{forgettable, fuzzy, BuiltinSummarizer, Compactor, History, Policy, Ready};
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     let mut f = std::pin::pin!(f);
    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
    /// # }
    /// let mut h = History::new();
    /// h.append(forgettable!(user: "{}", "x ".repeat(400)));
    /// h.append(fuzzy!(assistant: "ok"));
    /// let mut c = Compactor::with_summarizer(Policy::for_window(5_000).unwrap(), Ready(BuiltinSummarizer::default()));
    /// let plan = c.plan(&h).unwrap();
    /// let outcomes = block_on(c.summarize_plan(&h, &plan));
    /// assert_eq!(outcomes.len(), plan.runs().len());
    /// assert!(c.commit(&mut h, plan, outcomes).unwrap().fallbacks.is_empty());
    /// ```
    pub async fn summarize_plan(
        &self,
        history: &History,
        plan: &Plan,
    ) -> Vec<Result<String, SummarizeError>> {
        let lists = Self::requests(history, plan);
        let mut outcomes = Vec::with_capacity(lists.len());
        for (run, entries) in plan.runs().iter().zip(&lists) {
            let request = SummaryRequest {
                summary: run.summary,
                tier: plan.tier(),
                retention: run.retention,
                budget_tokens: run.budget_tokens,
                entries,
            };
            outcomes.push(self.summarizer().summarize(&request).await);
        }
        outcomes
    }

    /// [`compact_async`](Compactor::compact_async) for a journaled history: plans, awaits
    /// the summaries, then records the compaction in memory and in the journal.
    ///
    /// # Errors
    ///
    /// A [`JournalError`] if the compaction could not be written.
    ///
    /// ```
    /// use favur_context::{forgettable, fuzzy, BuiltinSummarizer, Compactor, JournaledHistory, Policy, Ready};
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     let mut f = std::pin::pin!(f);
    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
    /// # }
    /// let path = std::env::temp_dir().join(format!("favur-doc-cja-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let mut h = JournaledHistory::open(&path)?;
    /// h.append(forgettable!(user: "{}", "x ".repeat(400)))?;
    /// h.append(fuzzy!(assistant: "ok"))?;
    /// let mut c = Compactor::with_summarizer(Policy::for_window(5_000).unwrap(), Ready(BuiltinSummarizer::default()));
    /// let report = block_on(c.compact_journaled_async(&mut h))?.unwrap();
    /// assert_eq!(report.tier, 1);
    /// drop(h);
    /// assert_eq!(JournaledHistory::open(&path)?.compactions().len(), 1);
    /// # std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), favur_context::JournalError>(())
    /// ```
    pub async fn compact_journaled_async(
        &mut self,
        history: &mut JournaledHistory,
    ) -> Result<Option<CompactionReport>, JournalError> {
        self.uncover(history.history());
        let Some(plan) = self.plan(history.history()) else {
            return Ok(None);
        };
        if plan.is_empty() {
            return Ok(None);
        }
        let outcomes = self.summarize_plan(history.history(), &plan).await;
        // Nothing changed the history since the plan (it is borrowed mutably here), so the
        // commit cannot be stale.
        let report = history.record_with(|h| self.commit(h, plan, outcomes))?;
        Ok(report.ok())
    }
}
