//! The most a plan of a tier can free, read from the view items alone: a plan is not
//! worth making when even this is under the policy's minimum.

use crate::compact::policy::Tier;
use crate::history::view::ViewItem;

use super::MIN_SUMMARY_BUDGET;
use super::phases::{Fate, fate_of};

/// The most a plan of `row` can free, framing included (`framing` per block), read from
/// the view items alone: every item whose class the tier does not keep, or that the
/// per-entry cap may shorten, freed whole, less the least the summaries of the items to
/// summarize cost. No plan frees more: pairing only lets items that would leave stay
/// (reduced), never reduces one that stays, and an item to summarize either stays as it
/// is (its run not worth a summary) or is paid for by its run's summary.
///
/// Runs never span an item the tier keeps. Each stretch between such items whose items
/// to summarize free anything pays, for its runs together, at least `fixed` (one
/// summary's frame, see `summary_cost`) and the smaller of `budget_cap` and the larger
/// of `MIN_SUMMARY_BUDGET` and its members' shares, `min(per_entry, tokens / 4 * 3)`
/// each (see `summary_budget`: both of its terms add up over members, and what it
/// gives several runs adds up to at least what it gives their members together).
pub(super) fn most_freed(
    items: &[ViewItem],
    end: usize,
    row: &Tier,
    framing: u64,
    cap: Option<u32>,
    summaries: SummaryFloor,
) -> u64 {
    let mut whole = 0u64;
    let mut freed = 0u64;
    // The current stretch: what its items to summarize hold, and their shares.
    let (mut held, mut shares) = (0u64, 0u64);
    for (i, item) in items.iter().enumerate() {
        let fate = fate_of(item, i < end, row);
        let capped = cap.is_some_and(|cap| item.tokens > cap);
        if fate == Fate::Keep {
            freed += summaries.net(held, shares);
            (held, shares) = (0, 0);
            if !capped {
                continue;
            }
        }
        let now = u64::from(item.tokens) + framing * u64::from(item.blocks);
        if fate == Fate::Summarize && !capped {
            held += now;
            shares += u64::from(summaries.per_entry.min(item.tokens / 4 * 3));
        } else {
            whole += now;
        }
    }
    whole + freed + summaries.net(held, shares)
}

/// The least summaries cost, as `most_freed` reads it.
#[derive(Debug, Clone, Copy)]
pub(super) struct SummaryFloor {
    /// The policy's summary tokens per member.
    pub(super) per_entry: u32,
    /// The policy's largest summary budget.
    pub(super) budget_cap: u32,
    /// One summary's frame and framing, with one id range.
    pub(super) fixed: u64,
}

impl SummaryFloor {
    /// The most a stretch whose items to summarize hold `held` (framing included), with
    /// `shares` of budget, frees.
    fn net(self, held: u64, shares: u64) -> u64 {
        let budget = shares
            .max(u64::from(MIN_SUMMARY_BUDGET))
            .min(u64::from(self.budget_cap));
        held.saturating_sub(budget + self.fixed)
    }
}
