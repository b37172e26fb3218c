//! Why a policy is invalid: one variant per rule, each message naming the field.

use crate::compact::policy::Action;
use crate::model::retention::Retention;

/// Why a policy is invalid or could not be loaded. Each message names the field.
///
/// ```
/// use favur_context::compact::PolicyError;
/// use favur_context::Policy;
/// let err = Policy::builder().window_tokens(0).build().unwrap_err();
/// assert_eq!(err, PolicyError::ZeroWindow);
/// assert_eq!(err.to_string(), "window_tokens: a window of zero tokens cannot hold any request");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// `window_tokens` is 0.
    #[error("window_tokens: a window of zero tokens cannot hold any request")]
    ZeroWindow,
    /// `tiers` is empty.
    #[error("tiers: at least one tier is needed")]
    NoTiers,
    /// More than 255 tiers.
    #[error("tiers: {count} tiers given, at most 255 are supported")]
    TooManyTiers {
        /// How many were given.
        count: usize,
    },
    /// A threshold is not within (0, 1].
    #[error("tiers[{index}].at: {value} is not within (0, 1]")]
    ThresholdOutOfRange {
        /// Position of the tier (0-based; tier number is index + 1).
        index: usize,
        /// The threshold given.
        value: f64,
    },
    /// A threshold is not above the previous tier's.
    #[error("tiers[{index}].at: {value} is not above the previous tier's threshold {previous}")]
    ThresholdNotIncreasing {
        /// Position of the tier.
        index: usize,
        /// Its threshold.
        value: f64,
        /// The previous tier's threshold.
        previous: f64,
    },
    /// An action is milder than the same class's action in the tier below.
    #[error(
        "tiers[{index}].{class}: `{action}` is milder than `{previous}` in the tier below; actions never get milder as tiers rise"
    )]
    MilderAction {
        /// Position of the tier.
        index: usize,
        /// The class.
        class: Retention,
        /// Its action in this tier.
        action: Action,
        /// Its action in the tier below.
        previous: Action,
    },
    /// The first tier drops something: tier 1 deletes nothing.
    #[error("tiers[0].{class}: the first tier deletes nothing, so `drop` is not allowed there")]
    FirstTierDrops {
        /// The class the first tier would drop.
        class: Retention,
    },
    /// The limit is not within (0, 1].
    #[error("limit: {value} is not within (0, 1]")]
    LimitOutOfRange {
        /// The limit given.
        value: f64,
    },
    /// The limit is not above the highest tier's threshold.
    #[error("limit: {value} must be above the highest tier's threshold {highest}")]
    LimitNotAboveTiers {
        /// The limit given.
        value: f64,
        /// The highest tier's threshold.
        highest: f64,
    },
    /// `summary_budget_tokens` is 0.
    #[error("summary_budget_tokens: a summary needs a budget of at least one token")]
    ZeroSummaryBudget,
    /// `summary_tokens_per_entry` is 0.
    #[error("summary_tokens_per_entry: each entry a summary merges needs at least one token")]
    ZeroSummaryPerEntry,
    /// `strict_summary_tokens_per_entry` is less than `summary_tokens_per_entry`.
    #[error(
        "strict_summary_tokens_per_entry: {strict} is less than summary_tokens_per_entry {per_entry}; a summary of strict material may grow, not shrink"
    )]
    StrictSummaryBelowPerEntry {
        /// The strict budget per entry given.
        strict: u32,
        /// The policy's budget per entry.
        per_entry: u32,
    },
    /// `reserve_output_tokens` reaches the limit: every request would be refused.
    #[error(
        "reserve_output_tokens: {reserve} tokens reserved for the answer leave no room under the limit"
    )]
    ReserveTooLarge {
        /// The reserve given.
        reserve: u32,
    },
    /// `entry_cap_tokens` is 0.
    #[error("entry_cap_tokens: a cap of zero tokens would erase every entry; omit it for no cap")]
    ZeroEntryCap,
    /// `min_reclaim` is not within [0, the limit).
    #[error(
        "min_reclaim: {value} is not within [0, {limit}) (a fraction of the window, below the limit)"
    )]
    MinReclaimOutOfRange {
        /// The value given.
        value: f64,
        /// The limit.
        limit: f64,
    },
    /// `target` is not within [0, 1).
    #[error(
        "target: {value} is not within [0, 1) (a fraction of each tier's threshold; 0 applies tiers whole)"
    )]
    TargetOutOfRange {
        /// The value given.
        value: f64,
    },
    /// The TOML text is malformed or has unknown or mistyped fields.
    #[error("policy TOML: {0}")]
    Toml(String),
    /// The JSON text is malformed or has unknown or mistyped fields.
    #[error("policy JSON: {0}")]
    Json(String),
    /// The file could not be read or has an unknown extension.
    #[error("policy file {path}: {problem}")]
    File {
        /// The path given.
        path: String,
        /// What went wrong.
        problem: String,
    },
}
