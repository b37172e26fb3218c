//! Finding the baselines' budget and N that match the policy's mean request tokens.

use crate::ReplayError;
use crate::replay::{Prepared, replay};
use crate::strategy::{MaskOld, NoCompaction, Strategy, TrimOldest};

/// Mean request tokens of `strategy` on `prepared` (a replay without rendering).
pub fn mean_tokens(prepared: &Prepared, strategy: &mut dyn Strategy) -> Result<f64, ReplayError> {
    Ok(replay(prepared, strategy, None, &mut |_, _| Ok(()))?.mean_tokens())
}

/// The trim budget whose mean request tokens is closest to `target`, and that mean.
/// Bisection over the budget (the mean grows with the budget).
pub fn match_trim(prepared: &Prepared, target: f64) -> Result<(u64, f64), ReplayError> {
    let full = replay(prepared, &mut NoCompaction, None, &mut |_, _| Ok(()))?;
    let peak = full.steps.iter().map(|s| s.tokens).max().unwrap_or(0);
    if target >= full.mean_tokens() {
        return Ok((peak, full.mean_tokens()));
    }
    let (mut lo, mut hi) = (0u64, peak);
    let mut best = (peak, full.mean_tokens());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let mean = mean_tokens(prepared, &mut TrimOldest { budget: mid })?;
        if (mean - target).abs() < (best.1 - target).abs() {
            best = (mid, mean);
        }
        if mean < target {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(best)
}

/// The N (tool outputs kept verbatim, at least 1) whose mean request tokens is closest to
/// `target`, and that mean.
pub fn match_mask(prepared: &Prepared, target: f64) -> Result<(usize, f64), ReplayError> {
    let outputs = prepared
        .transcript()
        .results
        .iter()
        .filter(|r| **r)
        .count()
        .max(1);
    let mut cache: Vec<Option<f64>> = vec![None; outputs + 1];
    let mut mean_at = |keep: usize| -> Result<f64, ReplayError> {
        if let Some(m) = cache[keep] {
            return Ok(m);
        }
        let m = mean_tokens(prepared, &mut MaskOld::new(keep))?;
        cache[keep] = Some(m);
        Ok(m)
    };
    // Smallest keep whose mean reaches the target.
    let (mut lo, mut hi) = (1usize, outputs);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if mean_at(mid)? < target {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let mut best = (lo, mean_at(lo)?);
    if lo > 1 {
        let below = mean_at(lo - 1)?;
        if (below - target).abs() < (best.1 - target).abs() {
            best = (lo - 1, below);
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests;
