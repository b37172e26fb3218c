//! Building a policy in code: every setter, then one validation.

use std::num::NonZeroU8;

use super::{Policy, PolicyError, Tier};

/// Builds a [`Policy`], starting from the defaults; [`build`](PolicyBuilder::build)
/// validates.
///
/// ```
/// use favur_context::compact::{Action, Tier};
/// use favur_context::Policy;
/// let p = Policy::builder()
///     .window_tokens(100_000)
///     .tiers([
///         Tier::new(0.2, Action::Summarize, Action::Keep, Action::Keep),
///         Tier::new(0.4, Action::Drop, Action::Summarize, Action::Keep),
///     ])
///     .limit(0.8)
///     .summary_budget_tokens(200)
///     .build()
///     .unwrap();
/// assert_eq!(p.tiers().len(), 2);
/// ```
#[derive(Debug, Clone)]
pub struct PolicyBuilder {
    pub(super) policy: Policy,
}

impl PolicyBuilder {
    setters! {
        /// Sets the window.
        window_tokens(window_tokens: u64) => policy.window_tokens;
    }

    /// Replaces all tiers.
    pub fn tiers(mut self, tiers: impl IntoIterator<Item = Tier>) -> Self {
        self.policy.tiers = tiers.into_iter().collect();
        self
    }

    /// Sets the threshold of tier `n` (tiers are numbered from 1), keeping its actions. A
    /// tier that does not exist is left alone.
    ///
    /// ```
    /// use std::num::NonZeroU8;
    /// let p = favur_context::Policy::builder().threshold(NonZeroU8::MIN, 0.02).build().unwrap();
    /// assert_eq!(p.tiers()[0].at, 0.02);
    /// ```
    pub fn threshold(mut self, n: NonZeroU8, at: f64) -> Self {
        if let Some(t) = self.policy.tiers.get_mut(usize::from(n.get() - 1)) {
            t.at = at;
        }
        self
    }

    setters! {
        /// Sets the limit (a fraction of the window).
        limit(limit: f64) => policy.limit;

        /// Sets or clears the per-entry cap.
        entry_cap_tokens(cap: Option<u32>) => policy.entry_cap_tokens;

        /// Sets the most tokens one summary may take.
        summary_budget_tokens(budget: u32) => policy.summary_budget_tokens;

        /// Sets the budget a summary gets for each entry it merges.
        summary_tokens_per_entry(tokens: u32) => policy.summary_tokens_per_entry;

        /// Sets the most a summary of strict material gets per entry where there is room
        /// (see [`Policy::strict_summary_tokens_per_entry`]).
        strict_summary_tokens_per_entry(tokens: Option<u32>) => policy.strict_summary_tokens_per_entry;

        /// Sets how many recent consumed exchanges stay verbatim.
        keep_recent(exchanges: usize) => policy.keep_recent;

        /// Tokens set aside for the model's answer (see [`Policy::reserve_output_tokens`]).
        ///
        /// ```
        /// let err = favur_context::Policy::builder().window_tokens(1_000).reserve_output_tokens(500).build().unwrap_err();
        /// assert_eq!(err.to_string(), "reserve_output_tokens: 500 tokens reserved for the answer leave no room under the limit");
        /// ```
        reserve_output_tokens(tokens: u32) => policy.reserve_output_tokens;

        /// Sets the smallest reclaim worth a compaction (a fraction of the window).
        ///
        /// ```
        /// use favur_context::compact::PolicyError;
        /// use favur_context::Policy;
        /// assert_eq!(Policy::builder().min_reclaim(0.01).build().unwrap().min_reclaim(), 0.01);
        /// let err = Policy::builder().min_reclaim(0.6).build().unwrap_err();
        /// assert!(matches!(err, PolicyError::MinReclaimOutOfRange { .. }));
        /// ```
        min_reclaim(fraction: f64) => policy.min_reclaim;

        /// Sets where a tier stops, as a fraction of its threshold (see [`Policy::target`]).
        ///
        /// ```
        /// use favur_context::compact::PolicyError;
        /// use favur_context::Policy;
        /// assert_eq!(Policy::builder().target(0.5).build().unwrap().target_tokens(std::num::NonZeroU8::MIN), Some(5_000));
        /// let err = Policy::builder().target(1.0).build().unwrap_err();
        /// assert_eq!(err, PolicyError::TargetOutOfRange { value: 1.0 });
        /// ```
        target(fraction: f64) => policy.target;
    }

    /// Validates and returns the policy.
    ///
    /// ```
    /// use favur_context::compact::PolicyError;
    /// use favur_context::Policy;
    /// let err = Policy::builder().threshold(std::num::NonZeroU8::new(2).unwrap(), 0.01).build().unwrap_err();
    /// assert!(matches!(err, PolicyError::ThresholdNotIncreasing { index: 1, .. }));
    /// ```
    pub fn build(self) -> Result<Policy, PolicyError> {
        self.policy.validate()?;
        Ok(self.policy)
    }
}
