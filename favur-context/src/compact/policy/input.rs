//! The serde form a policy is read from (TOML or JSON): every field optional, falling
//! back to the default, unknown fields refused, the result validated.

use serde::Deserialize;

use super::{Policy, PolicyError, Tier};

/// The serde form of a policy. Every field is optional and falls back to the default.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PolicyIn {
    window_tokens: Option<u64>,
    tiers: Option<Vec<Tier>>,
    limit: Option<f64>,
    entry_cap_tokens: Option<u32>,
    summary_budget_tokens: Option<u32>,
    summary_tokens_per_entry: Option<u32>,
    strict_summary_tokens_per_entry: Option<u32>,
    keep_recent: Option<usize>,
    reserve_output_tokens: Option<u32>,
    min_reclaim: Option<f64>,
    target: Option<f64>,
}

impl<'de> Deserialize<'de> for Policy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = PolicyIn::deserialize(d)?;
        raw.into_policy().map_err(serde::de::Error::custom)
    }
}

impl PolicyIn {
    pub(super) fn into_policy(self) -> Result<Policy, PolicyError> {
        let d = Policy::default();
        let p = Policy {
            window_tokens: self.window_tokens.unwrap_or(d.window_tokens),
            tiers: self.tiers.unwrap_or(d.tiers),
            limit: self.limit.unwrap_or(d.limit),
            entry_cap_tokens: self.entry_cap_tokens,
            summary_budget_tokens: self
                .summary_budget_tokens
                .unwrap_or(d.summary_budget_tokens),
            summary_tokens_per_entry: self
                .summary_tokens_per_entry
                .unwrap_or(d.summary_tokens_per_entry),
            strict_summary_tokens_per_entry: self.strict_summary_tokens_per_entry,
            keep_recent: self.keep_recent.unwrap_or(d.keep_recent),
            reserve_output_tokens: self.reserve_output_tokens.unwrap_or(0),
            min_reclaim: self.min_reclaim.unwrap_or(d.min_reclaim),
            target: self.target.unwrap_or(d.target),
        };
        p.validate()?;
        Ok(p)
    }
}
