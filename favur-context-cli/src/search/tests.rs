use super::{match_mask, match_trim, mean_tokens};
use crate::strategy::{NoCompaction, TrimOldest};
use crate::tests::common::four_turns;

#[test]
fn the_trim_budget_found_gives_the_mean_it_reports() -> Result<(), crate::ReplayError> {
    let prepared = four_turns();
    let full = mean_tokens(&prepared, &mut NoCompaction)?;
    assert!(full > 0.0);
    let (budget, mean) = match_trim(&prepared, full * 0.8)?;
    assert_eq!(mean, mean_tokens(&prepared, &mut TrimOldest { budget })?);
    Ok(())
}

#[test]
fn an_unreachable_mask_target_settles_on_the_nearest_end() -> Result<(), crate::ReplayError> {
    let (keep, _mean) = match_mask(&four_turns(), 0.0)?;
    assert_eq!(keep, 1);
    Ok(())
}
