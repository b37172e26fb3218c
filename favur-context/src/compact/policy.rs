//! The compaction policy: the window, the tier thresholds, and what each tier does to each
//! retention class. All of it is per-job configuration, loadable from TOML or JSON.

use std::num::NonZeroU8;
use std::path::Path;

use serde::Serialize;

use crate::model::retention::Retention;
use input::PolicyIn;

/// The default window: 200,000 tokens.
pub const DEFAULT_WINDOW_TOKENS: u64 = 200_000;
/// The default most tokens one summary may take, however many entries it merges: 4,000 (2% of the default window).
pub const DEFAULT_SUMMARY_BUDGET_TOKENS: u32 = 4_000;
/// The default budget a summary gets for each entry it merges: 200 tokens.
pub const DEFAULT_SUMMARY_TOKENS_PER_ENTRY: u32 = 200;
/// The default [`min_reclaim`](Policy::min_reclaim): 1.25% of the window, a quarter of
/// the first default tier's threshold (2,500 tokens of a 200,000-token window): a
/// compaction must free at least a quarter of what tier 1 lets the request carry before
/// it is worth rewriting the cached prefix (`docs/compaction.md` has the figures).
pub const DEFAULT_MIN_RECLAIM: f64 = 0.0125;

/// The default [`target`](Policy::target): a tier stops once usage is at or below half of
/// its threshold (10,000 tokens for tier 2 of a 200,000-token window).
/// `docs/compaction.md` has the sweep it was chosen from.
pub const DEFAULT_TARGET: f64 = 0.5;

/// The compaction policy of one job.
///
/// Defaults (the design's table), with usage = request tokens / window:
///
/// | tier | fires at | forgettable | fuzzy | strict |
/// |---|---|---|---|---|
/// | 1 | 5% | summarize | summarize | keep |
/// | 2 | 10% | drop | drop | summarize |
/// | 3 | 25% | drop | drop | drop |
/// | limit | 50% | refused with [`LimitExceeded`](crate::compact::LimitExceeded) | | |
///
/// Build one in code with [`Policy::builder`], or load one from TOML or JSON. Every
/// constructor validates; an invalid policy cannot exist.
///
/// ```
/// use favur_context::compact::Action;
/// use favur_context::{Policy, Retention};
/// let p = Policy::default();
/// assert_eq!(p.window_tokens(), 200_000);
/// assert_eq!(p.tiers().len(), 3);
/// assert_eq!(p.tiers()[1].action(Retention::Strict), Action::Summarize);
/// assert_eq!(p.limit(), 0.5);
/// assert_eq!(p.tier_for(10_000).map(|t| t.get()), Some(1)); // 5% of 200k
/// assert_eq!(p.tier_for(9_999), None);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Policy {
    window_tokens: u64,
    limit: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    entry_cap_tokens: Option<u32>,
    summary_budget_tokens: u32,
    summary_tokens_per_entry: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict_summary_tokens_per_entry: Option<u32>,
    keep_recent: usize,
    #[serde(skip_serializing_if = "is_zero")]
    reserve_output_tokens: u32,
    min_reclaim: f64,
    target: f64,
    tiers: Vec<Tier>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            window_tokens: DEFAULT_WINDOW_TOKENS,
            tiers: default_tiers(),
            limit: 0.5,
            entry_cap_tokens: None,
            summary_budget_tokens: DEFAULT_SUMMARY_BUDGET_TOKENS,
            summary_tokens_per_entry: DEFAULT_SUMMARY_TOKENS_PER_ENTRY,
            strict_summary_tokens_per_entry: None,
            keep_recent: 0,
            reserve_output_tokens: 0,
            min_reclaim: DEFAULT_MIN_RECLAIM,
            target: DEFAULT_TARGET,
        }
    }
}

fn default_tiers() -> Vec<Tier> {
    use Action::{Drop, Keep, Summarize};
    vec![
        Tier::new(0.05, Summarize, Summarize, Keep),
        Tier::new(0.10, Drop, Drop, Summarize),
        Tier::new(0.25, Drop, Drop, Drop),
    ]
}

impl Policy {
    /// A builder starting from the defaults.
    pub fn builder() -> PolicyBuilder {
        PolicyBuilder {
            policy: Policy::default(),
        }
    }

    /// The default policy for a window of `window_tokens`.
    ///
    /// ```
    /// use favur_context::compact::PolicyError;
    /// use favur_context::Policy;
    /// assert_eq!(Policy::for_window(8_000).unwrap().window_tokens(), 8_000);
    /// assert_eq!(Policy::for_window(0), Err(PolicyError::ZeroWindow));
    /// ```
    pub fn for_window(window_tokens: u64) -> Result<Policy, PolicyError> {
        Policy::builder().window_tokens(window_tokens).build()
    }

    /// Parses and validates a policy in TOML. Omitted fields take their defaults.
    ///
    /// ```
    /// use favur_context::compact::Action;
    /// use favur_context::Policy;
    /// let p = Policy::from_toml_str(r#"
    /// window_tokens = 128000
    /// limit = 0.6
    /// keep_recent = 1
    ///
    /// [[tiers]]
    /// at = 0.1
    /// forgettable = "summarize"
    /// fuzzy = "keep"
    /// strict = "keep"
    ///
    /// [[tiers]]
    /// at = 0.3
    /// forgettable = "drop"
    /// fuzzy = "summarize"
    /// strict = "summarize"
    /// "#).unwrap();
    /// assert_eq!(p.tiers()[1].fuzzy, Action::Summarize);
    /// assert!(Policy::from_toml_str("window_tokens = 0").is_err());
    /// ```
    pub fn from_toml_str(text: &str) -> Result<Policy, PolicyError> {
        let raw: PolicyIn = toml::from_str(text).map_err(|e| PolicyError::Toml(e.to_string()))?;
        raw.into_policy()
    }

    /// Parses and validates a policy in JSON. Omitted fields take their defaults.
    ///
    /// ```
    /// use favur_context::compact::PolicyError;
    /// use favur_context::Policy;
    /// let p = Policy::from_json_str(r#"{"window_tokens": 64000, "entry_cap_tokens": 4000}"#).unwrap();
    /// assert_eq!(p.entry_cap_tokens(), Some(4000));
    /// let err = Policy::from_json_str(r#"{"limit": 0.01}"#).unwrap_err();
    /// assert!(matches!(err, PolicyError::LimitNotAboveTiers { .. }));
    /// ```
    pub fn from_json_str(text: &str) -> Result<Policy, PolicyError> {
        let raw: PolicyIn =
            serde_json::from_str(text).map_err(|e| PolicyError::Json(e.to_string()))?;
        raw.into_policy()
    }

    /// Loads a policy from a `.toml` or `.json` file.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("favur-policy-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("policy.toml");
    /// std::fs::write(&path, "window_tokens = 50000\n").unwrap();
    /// let p = favur_context::Policy::load(&path).unwrap();
    /// assert_eq!(p.window_tokens(), 50_000);
    /// assert!(favur_context::Policy::load(dir.join("missing.toml")).is_err());
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<Policy, PolicyError> {
        let path = path.as_ref();
        let file_error = |problem: String| PolicyError::File {
            path: path.display().to_string(),
            problem,
        };
        let text = std::fs::read_to_string(path).map_err(|e| file_error(e.to_string()))?;
        match path.extension().and_then(|e| e.to_str()) {
            Some("toml") => Policy::from_toml_str(&text),
            Some("json") => Policy::from_json_str(&text),
            _ => Err(file_error(
                "unknown extension: expected `.toml` or `.json`".into(),
            )),
        }
    }

    /// The policy in TOML.
    ///
    /// ```
    /// use favur_context::Policy;
    /// let p = Policy::default();
    /// assert_eq!(Policy::from_toml_str(&p.to_toml_string()).unwrap(), p);
    /// ```
    pub fn to_toml_string(&self) -> String {
        // A policy is plain data (numbers, strings, arrays of tables): this cannot fail.
        toml::to_string(self).unwrap_or_default()
    }

    /// The policy in JSON.
    ///
    /// ```
    /// use favur_context::Policy;
    /// let p = Policy::builder().entry_cap_tokens(Some(5_000)).build().unwrap();
    /// assert_eq!(Policy::from_json_str(&p.to_json_string()).unwrap(), p);
    /// ```
    pub fn to_json_string(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Checks every rule; the constructors call it, so a `Policy` value is always valid.
    ///
    /// ```
    /// assert!(favur_context::Policy::default().validate().is_ok());
    /// ```
    pub fn validate(&self) -> Result<(), PolicyError> {
        if self.window_tokens == 0 {
            return Err(PolicyError::ZeroWindow);
        }
        if self.tiers.is_empty() {
            return Err(PolicyError::NoTiers);
        }
        if self.tiers.len() > usize::from(u8::MAX) {
            return Err(PolicyError::TooManyTiers {
                count: self.tiers.len(),
            });
        }
        self.validate_tiers()?;
        if !(self.limit > 0.0 && self.limit <= 1.0) {
            return Err(PolicyError::LimitOutOfRange { value: self.limit });
        }
        if let Some(last) = self.tiers.last()
            && self.limit <= last.at
        {
            return Err(PolicyError::LimitNotAboveTiers {
                value: self.limit,
                highest: last.at,
            });
        }
        if self.summary_budget_tokens == 0 {
            return Err(PolicyError::ZeroSummaryBudget);
        }
        if self.summary_tokens_per_entry == 0 {
            return Err(PolicyError::ZeroSummaryPerEntry);
        }
        if let Some(strict) = self.strict_summary_tokens_per_entry
            && strict < self.summary_tokens_per_entry
        {
            return Err(PolicyError::StrictSummaryBelowPerEntry {
                strict,
                per_entry: self.summary_tokens_per_entry,
            });
        }
        if self.entry_cap_tokens == Some(0) {
            return Err(PolicyError::ZeroEntryCap);
        }
        let limit = (self.limit * self.window_tokens as f64).ceil();
        if f64::from(self.reserve_output_tokens) >= limit {
            return Err(PolicyError::ReserveTooLarge {
                reserve: self.reserve_output_tokens,
            });
        }
        if !(self.min_reclaim >= 0.0 && self.min_reclaim < self.limit) {
            return Err(PolicyError::MinReclaimOutOfRange {
                value: self.min_reclaim,
                limit: self.limit,
            });
        }
        if !(self.target >= 0.0 && self.target < 1.0) {
            return Err(PolicyError::TargetOutOfRange { value: self.target });
        }
        Ok(())
    }

    /// Each tier's threshold is in (0, 1] and above the one before; no tier is milder
    /// than the one before for any class; the first drops nothing.
    fn validate_tiers(&self) -> Result<(), PolicyError> {
        let mut previous: Option<&Tier> = None;
        for (index, tier) in self.tiers.iter().enumerate() {
            if !(tier.at > 0.0 && tier.at <= 1.0) {
                return Err(PolicyError::ThresholdOutOfRange {
                    index,
                    value: tier.at,
                });
            }
            match previous {
                Some(prev) => {
                    if tier.at <= prev.at {
                        return Err(PolicyError::ThresholdNotIncreasing {
                            index,
                            value: tier.at,
                            previous: prev.at,
                        });
                    }
                    for class in Retention::ALL {
                        let (action, before) = (tier.action(class), prev.action(class));
                        if action < before {
                            return Err(PolicyError::MilderAction {
                                index,
                                class,
                                action,
                                previous: before,
                            });
                        }
                    }
                }
                None => {
                    if let Some(class) = Retention::ALL
                        .into_iter()
                        .find(|c| tier.action(*c) == Action::Drop)
                    {
                        return Err(PolicyError::FirstTierDrops { class });
                    }
                }
            }
            previous = Some(tier);
        }
        Ok(())
    }

    /// The model's context window, in tokens.
    ///
    /// ```
    /// assert_eq!(favur_context::Policy::default().window_tokens(), 200_000);
    /// ```
    pub fn window_tokens(&self) -> u64 {
        self.window_tokens
    }

    /// The tiers, lowest first. Tier number `n` is `tiers()[n - 1]`.
    ///
    /// ```
    /// assert_eq!(favur_context::Policy::default().tiers()[0].at, 0.05);
    /// ```
    pub fn tiers(&self) -> &[Tier] {
        &self.tiers
    }

    /// The tier numbered `n` (tiers are numbered from 1), if any.
    ///
    /// ```
    /// use std::num::NonZeroU8;
    /// let p = favur_context::Policy::default();
    /// assert_eq!(p.tier(NonZeroU8::new(3).unwrap()).unwrap().at, 0.25);
    /// assert!(p.tier(NonZeroU8::new(4).unwrap()).is_none());
    /// ```
    pub fn tier(&self, n: NonZeroU8) -> Option<&Tier> {
        self.tiers.get(usize::from(n.get() - 1))
    }

    /// The limit, as a fraction of the window: a request at or over it is refused.
    ///
    /// ```
    /// assert_eq!(favur_context::Policy::default().limit(), 0.5);
    /// ```
    pub fn limit(&self) -> f64 {
        self.limit
    }

    /// The optional per-entry cap: an entry over it is shown shortened, with a visible
    /// elision marker, while its original stays in the history.
    ///
    /// ```
    /// assert_eq!(favur_context::Policy::default().entry_cap_tokens(), None);
    /// ```
    pub fn entry_cap_tokens(&self) -> Option<u32> {
        self.entry_cap_tokens
    }

    /// The most tokens one summary may take, however many entries it merges.
    ///
    /// ```
    /// assert_eq!(favur_context::Policy::default().summary_budget_tokens(), 4_000);
    /// ```
    pub fn summary_budget_tokens(&self) -> u32 {
        self.summary_budget_tokens
    }

    /// The budget a summary gets for each entry it merges (up to
    /// [`summary_budget_tokens`](Policy::summary_budget_tokens) in all, and never more
    /// than three quarters of what the entries themselves cost).
    ///
    /// ```
    /// assert_eq!(favur_context::Policy::default().summary_tokens_per_entry(), 200);
    /// ```
    pub fn summary_tokens_per_entry(&self) -> u32 {
        self.summary_tokens_per_entry
    }

    /// The most a summary of strict material gets for each entry it merges, where there is
    /// room: a tier chooses how far it reaches with summaries at
    /// [`summary_tokens_per_entry`](Policy::summary_tokens_per_entry), then gives its
    /// strict summaries up to this many tokens per entry while the plan still frees nine
    /// tenths of what its [target](Policy::target) asks (and `min_reclaim`). Unless set,
    /// twice `summary_tokens_per_entry`; set it equal to that for summaries that never
    /// grow. It may not be less.
    ///
    /// ```
    /// use favur_context::Policy;
    /// assert_eq!(Policy::default().strict_summary_tokens_per_entry(), 400);
    /// let p = Policy::from_toml_str("summary_tokens_per_entry = 300").unwrap();
    /// assert_eq!(p.strict_summary_tokens_per_entry(), 600);
    /// let err = Policy::from_toml_str("strict_summary_tokens_per_entry = 100").unwrap_err();
    /// assert!(err.to_string().contains("strict_summary_tokens_per_entry: 100 is less than summary_tokens_per_entry 200"));
    /// ```
    pub fn strict_summary_tokens_per_entry(&self) -> u32 {
        self.strict_summary_tokens_per_entry
            .unwrap_or(self.summary_tokens_per_entry.saturating_mul(2))
    }

    /// How many of the most recent consumed exchanges stay verbatim whatever their class
    /// (0, the default, is the design's behaviour). An exchange is an assistant entry
    /// and the entries after it up to the next assistant entry.
    ///
    /// ```
    /// assert_eq!(favur_context::Policy::default().keep_recent(), 0);
    /// ```
    pub fn keep_recent(&self) -> usize {
        self.keep_recent
    }

    /// The smallest reclaim worth a compaction, as a fraction of the window: a due tier
    /// whose plan would free fewer tokens (its [estimate](crate::compact::Plan::reclaim_estimate))
    /// does not fire, unless usage is at the limit. A compaction rewrites the request from
    /// its first change on, so the provider's cached prefix is lost from there; one that
    /// frees little costs more in cache misses than it saves.
    ///
    /// ```
    /// let p = favur_context::Policy::default();
    /// assert_eq!(p.min_reclaim(), 0.0125);
    /// assert_eq!(p.min_reclaim_tokens(), 2_500);
    /// ```
    pub fn min_reclaim(&self) -> f64 {
        self.min_reclaim
    }

    /// Where a tier stops, as a fraction of its threshold, in [0, 1). A tier acts on the
    /// oldest eligible material first (superseded material before everything else) and
    /// stops once its plan brings usage to at most `target` times its threshold, freeing
    /// at least [`min_reclaim`](Policy::min_reclaim) so the cache is not churned by tiny
    /// compactions. `0` applies every tier whole, to every eligible entry at once.
    ///
    /// The fraction is of what compaction can free: with pinned messages (and a
    /// [request overhead](crate::History::set_request_overhead_tokens)), the tier stops
    /// at those tokens plus `target` times the rest of its threshold
    /// ([`target_tokens_above`](Policy::target_tokens_above)), so a long system prompt
    /// does not make every compaction take all the history.
    ///
    /// ```
    /// use std::num::NonZeroU8;
    /// let p = favur_context::Policy::default();
    /// assert_eq!(p.target(), 0.5);
    /// let (two, nine) = (NonZeroU8::new(2).unwrap(), NonZeroU8::new(9).unwrap());
    /// assert_eq!(p.target_tokens(two), Some(10_000)); // half of tier 2's 20,000 tokens
    /// assert_eq!(p.target_tokens(nine), None);        // no such tier
    /// ```
    pub fn target(&self) -> f64 {
        self.target
    }

    /// The usage tier `n` stops at (see [`target`](Policy::target)), in tokens, rounded
    /// down; `None` when there is no tier `n`.
    ///
    /// ```
    /// let whole = favur_context::Policy::builder().target(0.0).build().unwrap();
    /// assert_eq!(whole.target_tokens(std::num::NonZeroU8::MIN), Some(0)); // the whole tier, every time
    /// ```
    pub fn target_tokens(&self, n: NonZeroU8) -> Option<u64> {
        self.target_tokens_above(n, 0)
    }

    /// The usage tier `n` stops at when `floor` tokens of every request are out of
    /// compaction's reach (pinned messages, the request overhead): `floor` plus [`target`](Policy::target) times the
    /// rest of the tier's threshold, rounded down; the plain target when the floor is
    /// at or over the threshold. `None` when there is no tier `n`.
    ///
    /// ```
    /// let p = favur_context::Policy::default();
    /// let two = std::num::NonZeroU8::new(2).unwrap();
    /// assert_eq!(p.target_tokens_above(two, 0), Some(10_000));
    /// assert_eq!(p.target_tokens_above(two, 8_000), Some(14_000)); // 8,000 + half of 12,000
    /// assert_eq!(p.target_tokens_above(two, 25_000), Some(10_000)); // nothing to share out
    /// ```
    pub fn target_tokens_above(&self, n: NonZeroU8, floor: u64) -> Option<u64> {
        let threshold = self.threshold_tokens(self.tier(n)?.at);
        let floor = if floor < threshold { floor } else { 0 };
        let t = (self.target * (threshold - floor) as f64).floor();
        Some(floor + if t <= 0.0 { 0 } else { t as u64 })
    }

    /// [`min_reclaim`](Policy::min_reclaim) in tokens, rounded up.
    ///
    /// ```
    /// let p = favur_context::Policy::builder().min_reclaim(0.0).build().unwrap();
    /// assert_eq!(p.min_reclaim_tokens(), 0);
    /// ```
    pub fn min_reclaim_tokens(&self) -> u64 {
        let t = (self.min_reclaim * self.window_tokens as f64).ceil();
        if t <= 0.0 { 0 } else { t as u64 }
    }

    /// Tokens set aside for the model's answer (default 0): the tiers and the limit
    /// compare the request's usage plus this reserve with their fraction of the window.
    ///
    /// ```
    /// let p = favur_context::Policy::builder().reserve_output_tokens(4_000).build().unwrap();
    /// assert_eq!(p.reserve_output_tokens(), 4_000);
    /// assert_eq!(p.threshold_tokens(0.05), 6_000); // 5% of 200k, less the reserve
    /// ```
    pub fn reserve_output_tokens(&self) -> u32 {
        self.reserve_output_tokens
    }

    /// A threshold (a fraction of the window) in tokens of usage, rounded up: usage
    /// reaches it when the request carries at least this many tokens. The
    /// [reserve for the answer](Policy::reserve_output_tokens) is taken off, so usage
    /// plus reserve is what meets the fraction.
    ///
    /// ```
    /// let p = favur_context::Policy::default();
    /// assert_eq!(p.threshold_tokens(0.05), 10_000);
    /// ```
    pub fn threshold_tokens(&self, fraction: f64) -> u64 {
        let t = (fraction * self.window_tokens as f64).ceil();
        let t = if t <= 0.0 { 0 } else { t as u64 };
        t.saturating_sub(u64::from(self.reserve_output_tokens))
    }

    /// The limit in tokens: a request carrying this many or more is refused.
    ///
    /// ```
    /// assert_eq!(favur_context::Policy::default().limit_tokens(), 100_000);
    /// ```
    pub fn limit_tokens(&self) -> u64 {
        self.threshold_tokens(self.limit)
    }

    /// The highest tier whose threshold `usage_tokens` reaches, `None` when it reaches
    /// none.
    ///
    /// ```
    /// let p = favur_context::Policy::default();
    /// assert_eq!(p.tier_for(0), None);
    /// assert_eq!(p.tier_for(20_000).map(|t| t.get()), Some(2));
    /// assert_eq!(p.tier_for(199_000).map(|t| t.get()), Some(3));
    /// ```
    pub fn tier_for(&self, usage_tokens: u64) -> Option<NonZeroU8> {
        let mut tier = None;
        // Tier numbers follow positions; a valid policy has at most 255 tiers.
        for (t, n) in self.tiers.iter().zip(1..=u8::MAX) {
            if usage_tokens >= self.threshold_tokens(t.at) {
                tier = NonZeroU8::new(n);
            }
        }
        tier
    }
}

mod builder;
mod error;
mod input;
mod tier;

pub use builder::PolicyBuilder;
pub use error::PolicyError;
pub use tier::{Action, Tier};
