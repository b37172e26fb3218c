//! How far a tier reaches: the compactable items in the order a tier takes them
//! (superseded material first, then the oldest), so that it frees what it needs and stops.

use std::collections::HashSet;

use crate::model::classify::key_of;

use super::phases::{Fate, Planner};

/// Per view item, whether it is *superseded*: a later view item carries the same
/// [supersession key](crate::Classified::with_key) (a newer view of the same file, an edit
/// of it, a rerun of the same command). Read newest first, one key set: linear.
pub(super) fn superseded(p: &Planner<'_>) -> Vec<bool> {
    let mut later: HashSet<&str> = HashSet::new();
    let mut out = vec![false; p.items.len()];
    for (i, item) in p.items.iter().enumerate().rev() {
        let Some(key) = p.history.entry(item.id).and_then(|e| key_of(e.message())) else {
            continue;
        };
        out[i] = !later.insert(key);
    }
    out
}

/// The items a tier acts on (`base[i]` is not [`Fate::Keep`]), in the order it takes
/// them: the superseded ones first, oldest first, then the rest, oldest first.
pub(super) fn order(base: &[Fate], superseded: &[bool]) -> Vec<usize> {
    let acted = |i: &usize| base[*i] != Fate::Keep;
    let first = (0..base.len()).filter(|i| acted(i) && superseded[*i]);
    let rest = (0..base.len()).filter(|i| acted(i) && !superseded[*i]);
    first.chain(rest).collect()
}

/// The fates of a tier that takes only the first `k` items of `order`: every other item
/// is kept as it is.
pub(super) fn limited(base: &[Fate], order: &[usize], k: usize) -> Vec<Fate> {
    let mut fate = vec![Fate::Keep; base.len()];
    for &i in order.iter().take(k) {
        fate[i] = base[i];
    }
    fate
}

/// The smallest `k` in `1..=len` for which `frees(k)` reaches `need`, by bisection (what a
/// plan frees grows with what it may take, up to the pairing of tool calls, which only
/// ever lets more stay); `len` when even all of them fall short.
pub(super) fn smallest(len: usize, need: u64, mut frees: impl FnMut(usize) -> u64) -> usize {
    let (mut lo, mut hi) = (1, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if frees(mid) >= need {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn superseded_items_come_first_then_the_oldest() {
        let base = [
            Fate::Summarize,
            Fate::Keep,
            Fate::Drop,
            Fate::Summarize,
            Fate::Keep,
        ];
        let sup = [false, false, false, true, true];
        assert_eq!(order(&base, &sup), vec![3, 0, 2]);
        let two = limited(&base, &order(&base, &sup), 2);
        assert_eq!(
            two,
            vec![
                Fate::Summarize,
                Fate::Keep,
                Fate::Keep,
                Fate::Summarize,
                Fate::Keep
            ]
        );
    }

    #[test]
    fn bisection_finds_the_smallest_reach() {
        let frees = |k: usize| (k as u64) * 10;
        assert_eq!(smallest(10, 35, frees), 4);
        assert_eq!(smallest(10, 10, frees), 1);
        assert_eq!(smallest(10, 1_000, frees), 10); // never enough: everything
        assert_eq!(smallest(1, 0, frees), 1);
    }
}
