//! The async compaction step on its own: the summaries of a plan, awaited.

use crate::compact::compactor::Compactor;
use crate::compact::plan::Plan;
use crate::compact::summarize::{AsyncSummarizer, SummarizeError};
use crate::compact::summary_inputs::{run_inputs, summary_requests};
use crate::history::History;

impl<S: AsyncSummarizer> Compactor<S> {
    /// Summarizes every run of `plan` with the async summarizer, one awaited call per
    /// run (or all at once, if it has them without awaiting:
    /// [`AsyncSummarizer::summarize_runs_now`]), in the order of [`Plan::runs`]: the outcomes
    /// [`commit`](Compactor::commit) takes.
    ///
    /// ```
    /// use favur_context::compact::{BuiltinSummarizer, Ready};
    /// use favur_context::{forgettable, fuzzy, Compactor, History, Policy};
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
        let inputs = run_inputs(history, plan);
        let requests: Vec<_> = summary_requests(plan, &inputs).collect();
        if let Some(outcomes) = self.summarizer().summarize_runs_now(&requests) {
            return outcomes;
        }
        let mut outcomes = Vec::with_capacity(requests.len());
        for request in &requests {
            outcomes.push(self.summarizer().summarize(request).await);
        }
        outcomes
    }
}
