//! The engine: decides when a tier fires, plans, summarizes each run once, records the
//! compaction, reports it, and refuses requests over the limit.

use std::num::NonZeroU8;

use super::report::{CommitError, CompactionReport, Fallback, LimitExceeded, emit};
use super::summary_inputs::{RunInputs, run_inputs, summary_requests};
use crate::compact::plan::{Plan, Run, Stamp};
use crate::compact::policy::Policy;
use crate::compact::prepared::{PrepareError, Prepared};
use crate::compact::summarize::{AsyncSummarizer, BuiltinSummarizer, SummarizeError, Summarizer};
use crate::history::view::{Compaction, Edit};
use crate::history::{CheckedCompaction, History};
use crate::model::entry::{Entry, EntryKind};
use crate::model::message::Message;
use crate::model::site::CallSite;
use crate::store_trait::{AsyncStore, Store};

/// The compaction engine of one job: a [`Policy`] and a summarizer.
///
/// Call [`prepare`](Compactor::prepare) (or [`prepare_async`](Compactor::prepare_async))
/// before each model request, on any [`Store`] (a [`History`], a
/// [`JournaledHistory`](crate::journal::JournaledHistory)): it compacts if a tier is due, records
/// the compaction in the store, and reports what it did, or refuses with
/// [`LimitExceeded`].
///
/// A tier is due when usage reaches its threshold and the last recorded compaction (read
/// from [`History::compactions`], so an engine made afresh over a reopened history
/// decides the same) left usage below that threshold: a tier does not fire again on
/// every request while usage stays above it, and the next tier waits for its own
/// threshold. A due tier whose plan would free less than the policy's
/// [`min_reclaim`](Policy::min_reclaim) does not fire (it would cost the cached prefix
/// for little). At or over the limit, the highest tier reached is always applied.
///
/// ```
/// use favur_context::{forgettable, strict, fuzzy, Compactor, History, Policy};
/// let mut h = History::new();
/// let mut c = Compactor::new(Policy::for_window(10_000).unwrap());
/// h.append(strict!(user: "fix the test"));
/// h.append(fuzzy!(tool_call: "c1", "bash", serde_json::json!({"command": "ls -R"})));
/// h.append(forgettable!(tool_result("c1"): "{}", "src/file.rs\n".repeat(200)));
/// h.append(fuzzy!(assistant: "found it"));
/// let done = c.prepare(&mut h).unwrap();
/// assert!(done.compacted());
/// assert!(h.view().len() < 4);
/// assert_eq!(done.report.unwrap().tier.get(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct Compactor<S = BuiltinSummarizer> {
    policy: Policy,
    summarizer: S,
    fallback: BuiltinSummarizer,
    last_report: Option<CompactionReport>,
}

impl Compactor<BuiltinSummarizer> {
    /// An engine with the built-in summarizer.
    pub fn new(policy: Policy) -> Self {
        Compactor::with_summarizer(policy, BuiltinSummarizer::default())
    }
}

impl<S> Compactor<S> {
    /// An engine with your summarizer (a [`Summarizer`] or an [`AsyncSummarizer`]).
    pub fn with_summarizer(policy: Policy, summarizer: S) -> Self {
        Compactor {
            policy,
            summarizer,
            fallback: BuiltinSummarizer::default(),
            last_report: None,
        }
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Replaces the policy (a new window for the job, say).
    pub fn set_policy(&mut self, policy: Policy) {
        self.policy = policy;
    }

    /// The summarizer.
    pub fn summarizer(&self) -> &S {
        &self.summarizer
    }

    /// The report of the last compaction this engine made.
    pub fn last_report(&self) -> Option<&CompactionReport> {
        self.last_report.as_ref()
    }

    /// The tier that would fire now, if any (see the type's docs for when a tier is due).
    ///
    /// ```
    /// use favur_context::{strict, Compactor, History, Policy};
    /// let mut h = History::new();
    /// let c = Compactor::new(Policy::for_window(100).unwrap());
    /// assert_eq!(c.due(&h), None);
    /// h.append(strict!(user: "{}", "w ".repeat(20)));
    /// assert_eq!(c.due(&h).map(|t| t.get()), Some(2));
    /// ```
    pub fn due(&self, history: &History) -> Option<NonZeroU8> {
        let usage = history.usage_tokens();
        let tier = self.policy.tier_for(usage)?;
        (Some(tier) > self.covered(history) || usage >= self.policy.limit_tokens()).then_some(tier)
    }

    /// The tiers the last recorded compaction covered: those its usage after still
    /// reached (under this engine's policy), and none that usage now no longer reaches.
    /// Read from [`History::compactions`] alone, so that an engine made afresh over a
    /// reopened history decides exactly as the one that made the compactions.
    /// `None` when it covered none (or there is none).
    fn covered(&self, history: &History) -> Option<NonZeroU8> {
        let after = history
            .compactions()
            .last()
            .and_then(|c| c.usage_after)
            .and_then(|u| self.policy.tier_for(u));
        after.min(self.policy.tier_for(history.usage_tokens()))
    }

    /// Plans the compaction that is due, if any (pure: changes nothing). Summarize each of
    /// its runs (see [`Plan::runs`]) and hand the texts to [`commit`](Compactor::commit):
    /// this is how to drive compaction step by step from any async code.
    ///
    /// ```
    /// use favur_context::{forgettable, fuzzy, Compactor, History, Policy};
    /// let mut h = History::new();
    /// h.append(forgettable!(user: "{}", "x ".repeat(100)));
    /// h.append(fuzzy!(assistant: "ok"));
    /// let c = Compactor::new(Policy::for_window(1_000).unwrap());
    /// let plan = c.plan(&h).unwrap();
    /// assert_eq!(plan.tier().get(), 2);
    /// ```
    pub fn plan(&self, history: &History) -> Option<Plan> {
        let tier = self.due(history)?;
        let forced = history.usage_tokens() >= self.policy.limit_tokens();
        let min = self.policy.min_reclaim_tokens();
        // A plan frees at most what the view items it may change hold: when even that is
        // under the minimum, the plan would not fire, so it is not made.
        if !forced && Plan::most_freed(history, &self.policy, tier) < min {
            return None;
        }
        let plan = Plan::new(history, &self.policy, tier);
        (forced || plan.reclaim_estimate() >= min).then_some(plan)
    }

    /// Turns `plan` and one summary outcome per run (in the order of [`Plan::runs`]) into
    /// a [`Compaction`] record, checks it against the store's history and applies it
    /// ([`Store::apply_checked`]); a failed outcome is replaced by the built-in summarizer's text and listed in the report's
    /// fallbacks. Emits the report as a `tracing` event. With [`plan`](Compactor::plan),
    /// this is how to drive compaction step by step (summaries from any async code).
    ///
    /// # Errors
    ///
    /// [`CommitError::Stale`] if the history changed since the plan,
    /// [`CommitError::Outcomes`] for the wrong number of outcomes,
    /// [`CommitError::Store`] if the store did not record it; nothing changed then.
    ///
    /// ```
    /// use favur_context::compact::SummarizeError;
    /// use favur_context::{forgettable, fuzzy, Compactor, History, Policy};
    /// let mut h = History::new();
    /// h.append(forgettable!(user: "{}", "x ".repeat(400)));
    /// h.append(fuzzy!(assistant: "ok"));
    /// let mut c = Compactor::new(Policy::default());
    /// let plan = favur_context::compact::Plan::new(&h, c.policy(), std::num::NonZeroU8::MIN);
    /// let outcomes = plan.runs().iter().map(|_| Err(SummarizeError::new("timeout"))).collect();
    /// let report = c.commit(&mut h, plan, outcomes).unwrap();
    /// assert_eq!(report.fallbacks.len(), 1);
    /// assert_eq!(h.view().len(), 2);
    /// ```
    pub fn commit<St: Store>(
        &mut self,
        store: &mut St,
        plan: Plan,
        outcomes: Vec<Result<String, SummarizeError>>,
    ) -> Result<CompactionReport, CommitError<St::Error>> {
        let (compaction, fallbacks, before) = self.record(store.history(), &plan, outcomes)?;
        if let Some(checked) = compaction {
            store.apply_checked(checked).map_err(CommitError::Store)?;
        }
        Ok(self.reported(&plan, before, store.history(), fallbacks))
    }

    /// The report of `plan` committed to `history` (whose usage was `before`), emitted
    /// and kept as the last one.
    fn reported(
        &mut self,
        plan: &Plan,
        before: u64,
        history: &History,
        fallbacks: Vec<Fallback>,
    ) -> CompactionReport {
        let report = CompactionReport {
            tier: plan.tier(),
            usage_before: before,
            usage_after: history.usage_tokens(),
            window: self.policy.window_tokens(),
            classes: *plan.outcome(),
            summaries: plan.runs().iter().map(|r| r.summary).collect(),
            reformed: plan.reforms().len(),
            summarizer_calls: plan.runs().len(),
            fallbacks,
            prefix_tokens: plan.prefix_tokens(),
            superseded: plan.superseded().to_vec(),
        };
        emit(&report);
        self.last_report = Some(report.clone());
        report
    }

    /// The compaction record of `plan` with one summary outcome per run, checked against
    /// `history` (`None` when the plan edits nothing), the runs whose summary the built-in
    /// summarizer wrote, and the usage before.
    fn record<E>(
        &self,
        history: &History,
        plan: &Plan,
        outcomes: Vec<Result<String, SummarizeError>>,
    ) -> Result<(Option<CheckedCompaction>, Vec<Fallback>, u64), CommitError<E>> {
        if plan.stamp != Stamp::of(history) {
            return Err(CommitError::Stale);
        }
        if outcomes.len() != plan.runs().len() {
            return Err(CommitError::Outcomes {
                runs: plan.runs().len(),
                given: outcomes.len(),
            });
        }
        let mut fallbacks = Vec::new();
        let mut edits = Vec::with_capacity(plan.runs().len() + plan.reforms().len());
        let mut inputs: Option<Vec<RunInputs<'_>>> = None;
        for (index, (run, outcome)) in plan.runs().iter().zip(outcomes).enumerate() {
            let body = match outcome {
                Ok(text) if !text.trim().is_empty() => text,
                failed => {
                    let error = match failed {
                        Err(e) => e.to_string(),
                        Ok(_) => "the summarizer returned an empty text".to_owned(),
                    };
                    fallbacks.push(Fallback {
                        summary: run.summary,
                        error,
                    });
                    let inputs = inputs.get_or_insert_with(|| run_inputs(history, plan));
                    self.fallback_text(inputs.get(index), plan, run)
                }
            };
            // Its tokens are counted by the check below, once.
            let entry = Entry::new(
                run.summary,
                run.retention,
                0,
                CallSite::new("<compaction>", u32::from(plan.tier().get()), 0),
                EntryKind::Summary {
                    replaces: run.members.clone(),
                },
                summary_message(&body),
            );
            edits.push(Edit::Summarize {
                summary: entry.into(),
            });
        }
        for r in plan.reforms() {
            edits.push(Edit::Reform {
                id: r.id,
                form: r.form.clone(),
                tokens: r.tokens,
            });
        }
        for id in plan.drops() {
            edits.push(Edit::Drop { id: *id });
        }
        if edits.is_empty() {
            return Ok((None, fallbacks, history.usage_tokens()));
        }
        // The usage it leaves is recorded with it: what a compactor reopened later reads
        // to know which tiers it covered.
        let compaction = Compaction {
            tier: plan.tier(),
            edits,
            usage_after: None,
        };
        // The check counts every summary and reform with the history's counter; the
        // record keeps those counts.
        let mut checked = history.check(compaction).map_err(|_| CommitError::Stale)?;
        checked.set_usage_after(history.usage_after(checked.view()));
        Ok((Some(checked), fallbacks, history.usage_tokens()))
    }

    /// The built-in summarizer's text for `run`, on its inputs.
    fn fallback_text(&self, input: Option<&RunInputs<'_>>, plan: &Plan, run: &Run) -> String {
        match input {
            Some(input) => self
                .fallback
                .summarize(&input.request(plan, run))
                .unwrap_or_else(|e| e.to_string()),
            None => "the run's entries are not held".to_owned(),
        }
    }

    fn check_limit(&self, history: &History) -> Result<(), LimitExceeded> {
        let tokens = history.usage_tokens();
        let limit = self.policy.limit_tokens();
        if tokens >= limit {
            return Err(LimitExceeded {
                tokens,
                window: self.policy.window_tokens(),
                limit,
            });
        }
        Ok(())
    }
}

/// The message of a summary entry: the summary text, marked as the engine's. What it
/// renders as (the `<context-summary>` block naming its id and the ids it replaces, with
/// the text neutralised) is [`render::summary_block`](crate::request::render::summary_block); its
/// token count is the count of that block.
///
/// ```
/// use favur_context::compact::summary_message;
/// let m = summary_message("ran the tests\n");
/// assert_eq!(m.text(), "ran the tests");
/// assert_eq!(m.extensions["favur_kind"], "summary");
/// ```
pub fn summary_message(body: &str) -> Message {
    Message::user(body.trim_end()).with_extension("favur_kind", serde_json::Value::from("summary"))
}

impl<S: Summarizer> Compactor<S> {
    /// Compacts if a tier is due and records the compaction in `store`; returns the
    /// report, or `None` when nothing was due or nothing was compactable. Does not check
    /// the limit: before a model request, call [`prepare`](Compactor::prepare).
    ///
    /// # Errors
    ///
    /// The store's error if it did not record the compaction; then nothing changed.
    ///
    /// ```
    /// use favur_context::{Compactor, History, Policy};
    /// let mut h = History::new();
    /// assert!(Compactor::new(Policy::default()).compact(&mut h).unwrap().is_none());
    /// ```
    pub fn compact<St: Store>(
        &mut self,
        store: &mut St,
    ) -> Result<Option<CompactionReport>, St::Error> {
        let Some(plan) = self.plan(store.history()) else {
            return Ok(None);
        };
        self.run_plan(store, plan)
    }

    /// Applies `tier` now, whether or not it is due, and records it in `store`.
    ///
    /// # Errors
    ///
    /// The store's error if it did not record the compaction; then nothing changed.
    ///
    /// ```
    /// use favur_context::{forgettable, fuzzy, Compactor, History, Policy};
    /// let mut h = History::new();
    /// h.append(forgettable!(user: "{}", "listing ".repeat(20)));
    /// h.append(fuzzy!(assistant: "ok"));
    /// let two = std::num::NonZeroU8::new(2).unwrap();
    /// let r = Compactor::new(Policy::default()).compact_at(&mut h, two).unwrap().unwrap();
    /// assert_eq!(r.classes.forgettable.dropped.entries, 1);
    /// ```
    pub fn compact_at<St: Store>(
        &mut self,
        store: &mut St,
        tier: NonZeroU8,
    ) -> Result<Option<CompactionReport>, St::Error> {
        let plan = Plan::new(store.history(), &self.policy, tier);
        self.run_plan(store, plan)
    }

    fn run_plan<St: Store>(
        &mut self,
        store: &mut St,
        plan: Plan,
    ) -> Result<Option<CompactionReport>, St::Error> {
        if plan.is_empty() {
            return Ok(None);
        }
        let outcomes = {
            let inputs = run_inputs(store.history(), &plan);
            let requests: Vec<_> = summary_requests(&plan, &inputs).collect();
            self.summarizer.summarize_runs(&requests)
        };
        committed(self.commit(store, plan, outcomes))
    }

    /// The one call before each model request, on any [`Store`]: compacts if a tier is
    /// due, records the compaction in the store, and reports what it did; or refuses with
    /// [`PrepareError::Limit`] if the request would still carry the limit or more. Then
    /// send the store's view ([`render_openai`](crate::request::render::render_openai) or
    /// [`render_anthropic`](crate::request::render::render_anthropic) of its history).
    ///
    /// # Errors
    ///
    /// [`PrepareError::Limit`] over the limit (what was compacted stays recorded, see
    /// [`last_report`](Compactor::last_report)); [`PrepareError::Store`] if the store did
    /// not record the compaction (then nothing changed).
    ///
    /// ```
    /// use favur_context::{fuzzy, Compactor, History, Policy};
    /// let mut h = History::new();
    /// let mut c = Compactor::new(Policy::default());
    /// h.append(fuzzy!(user: "hi"));
    /// let done = c.prepare(&mut h).unwrap();
    /// assert!(!done.compacted());
    /// assert_eq!(done.usage_tokens, h.usage_tokens());
    /// assert_eq!(h.view().len(), 1);
    /// ```
    pub fn prepare<St: Store>(
        &mut self,
        store: &mut St,
    ) -> Result<Prepared, PrepareError<St::Error>> {
        let report = self.compact(store).map_err(PrepareError::Store)?;
        self.prepared(store.history(), report)
    }
}

/// The report of a commit made by the engine itself from a plan it just made (which is
/// never stale and has one outcome per run), or the store's error.
fn committed<E>(
    result: Result<CompactionReport, CommitError<E>>,
) -> Result<Option<CompactionReport>, E> {
    match result {
        Ok(report) => Ok(Some(report)),
        Err(CommitError::Store(e)) => Err(e),
        Err(CommitError::Stale | CommitError::Outcomes { .. }) => Ok(None),
    }
}

impl<S> Compactor<S> {
    fn prepared<E>(
        &self,
        history: &History,
        report: Option<CompactionReport>,
    ) -> Result<Prepared, PrepareError<E>> {
        self.check_limit(history).map_err(PrepareError::Limit)?;
        Ok(Prepared {
            report,
            usage_tokens: history.usage_tokens(),
        })
    }
}

impl<S: AsyncSummarizer> Compactor<S> {
    /// [`compact`](Compactor::compact) with an async summarizer: one awaited call per run,
    /// on whatever executor runs this future. The future is `Send` when the store and
    /// the summarizer are (so it can be `tokio::spawn`ed).
    ///
    /// # Errors
    ///
    /// The store's error if it did not record the compaction; then nothing changed.
    ///
    /// ```
    /// use favur_context::compact::{AsyncSummarizer, SummarizeError, SummaryRequest};
    /// use favur_context::{forgettable, fuzzy, Compactor, History, Policy};
    /// struct Llm;
    /// impl AsyncSummarizer for Llm {
    ///     async fn summarize(&self, r: &SummaryRequest<'_>) -> Result<String, SummarizeError> {
    ///         Ok(format!("the model's gist of {} entries", r.entries.len()))
    ///     }
    /// }
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     let mut f = std::pin::pin!(f);
    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
    /// # }
    /// let mut h = History::new();
    /// h.append(forgettable!(user: "{}", "x ".repeat(800)));
    /// h.append(fuzzy!(assistant: "ok"));
    /// let mut c = Compactor::with_summarizer(Policy::for_window(10_000).unwrap(), Llm);
    /// let report = block_on(c.compact_async(&mut h)).unwrap().unwrap();
    /// assert_eq!(report.tier.get(), 1);
    /// assert_eq!(report.summarizer_calls, 1); // one run, one call
    /// ```
    pub async fn compact_async<St: AsyncStore>(
        &mut self,
        store: &mut St,
    ) -> Result<Option<CompactionReport>, St::Error> {
        let Some(plan) = self.plan(store.history()) else {
            return Ok(None);
        };
        if plan.is_empty() {
            return Ok(None);
        }
        let outcomes = self.summarize_plan(store.history(), &plan).await;
        // A plan made just now is never stale and has one outcome per run.
        let Ok((compaction, fallbacks, before)) =
            self.record::<St::Error>(store.history(), &plan, outcomes)
        else {
            return Ok(None);
        };
        if let Some(checked) = compaction {
            store.apply_checked(checked).await?;
        }
        Ok(Some(self.reported(
            &plan,
            before,
            store.history(),
            fallbacks,
        )))
    }

    /// [`prepare`](Compactor::prepare) with an async summarizer (an LLM): the same
    /// decisions, records and errors, on any [`AsyncStore`] (every `Send` [`Store`] is
    /// one), awaiting the store's write. The future is `Send` when the summarizer is.
    ///
    /// # Errors
    ///
    /// As for [`prepare`](Compactor::prepare).
    ///
    /// ```
    /// use favur_context::compact::{BuiltinSummarizer, Ready};
    /// use favur_context::{fuzzy, Compactor, History, Policy};
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     let mut f = std::pin::pin!(f);
    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
    /// # }
    /// let mut h = History::new();
    /// h.append(fuzzy!(user: "hi"));
    /// let mut c = Compactor::with_summarizer(Policy::default(), Ready(BuiltinSummarizer::default()));
    /// assert!(!block_on(c.prepare_async(&mut h)).unwrap().compacted());
    /// ```
    pub async fn prepare_async<St: AsyncStore>(
        &mut self,
        store: &mut St,
    ) -> Result<Prepared, PrepareError<St::Error>> {
        let report = self
            .compact_async(store)
            .await
            .map_err(PrepareError::Store)?;
        self.prepared(store.history(), report)
    }
}
