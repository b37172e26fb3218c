//! One plan from one set of fates: pairing, forms and runs settled together, then the
//! edits and what they free.

use super::edits::{self, Edits};
use super::phases::{self, Fate, Planner, Runs};
use crate::sent::Staying;

#[cfg(test)]
mod tests;

/// Bound on the rounds that settle pairing and runs after small runs are kept.
pub(super) const MAX_SETTLE_ROUNDS: usize = 4;

/// A settled plan: each item's fate, the runs and the edits.
pub(super) struct Settled {
    pub(super) fate: Vec<Fate>,
    pub(super) runs: Runs,
    pub(super) edits: Edits,
    /// What the summaries (and a note turn the plan makes the request need) cost.
    pub(super) costs: u64,
    /// The rounds it took, at most [`MAX_SETTLE_ROUNDS`].
    pub(super) rounds: usize,
    /// Whether the rounds ran out with a run still not worth its summary (one the next
    /// round would have kept).
    pub(super) unsettled: bool,
    /// The tokens each summary of strict material was given per entry it merges.
    pub(super) strict_per_entry: u32,
}

impl Settled {
    /// Tokens freed, less what the summaries cost.
    pub(super) fn reclaim(&self) -> u64 {
        self.edits.freed.saturating_sub(self.costs)
    }
}

/// Settles `base` (the fates by class): pairing, forms and runs together. A run whose
/// summary would cost at least what its members free is kept as it is and the phases run
/// again, since keeping its members can change what their tool partners must do; a few
/// rounds settle it. `None` when altogether the plan would grow the request (the note
/// turn a request starting with the assistant needs, say): nothing is worth doing.
pub(super) fn settle(p: &Planner<'_>, base: Vec<Fate>) -> Option<Settled> {
    let mut kept_small: Vec<usize> = Vec::new();
    let mut fate = base.clone();
    let mut staying: Vec<Option<Staying>> = Vec::new();
    let mut newly: Vec<usize> = Vec::new();
    let mut pair_again = true;
    let mut runs;
    let mut round = 0;
    let mut unsettled = false;
    loop {
        if pair_again {
            fate.clone_from(&base);
            for &i in &kept_small {
                fate[i] = Fate::Keep;
            }
            phases::pairing(p, &mut fate);
            staying = phases::forms(p, &mut fate);
        } else {
            // Keeping these changes no tool pairing: only the runs are rebuilt.
            for &i in &newly {
                fate[i] = Fate::Keep;
                staying[i] = None;
            }
        }
        runs = phases::runs(p, &fate, &staying);
        round += 1;
        if round == MAX_SETTLE_ROUNDS {
            unsettled = !phases::unworthy(p, &runs).is_empty();
            break;
        }
        newly = phases::unworthy(p, &runs);
        if newly.is_empty() {
            break;
        }
        pair_again = phases::pairing_changes(p.items, &fate, &newly);
        kept_small.extend_from_slice(&newly);
    }
    let costs: u64 = runs
        .runs
        .iter()
        .map(|r| phases::summary_cost(p, r))
        .sum::<u64>()
        + phases::first_turn_change(p, &fate, &runs);
    let edits = edits::edits(p, &fate, &staying, &runs);
    (edits.freed >= costs).then_some(Settled {
        fate,
        runs,
        edits,
        costs,
        rounds: round,
        unsettled,
        strict_per_entry: p.strict_per_entry,
    })
}
