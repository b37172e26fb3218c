//! How far a tier reaches: the compactable items in the order a tier takes them
//! (superseded material first, then the oldest), so that it frees what it needs and stops.

use std::collections::{HashMap, HashSet};

use crate::model::classify::{KeyPart, key_of, key_part_of};

use super::phases::{Fate, Planner};

/// Per view item, whether it is *superseded*: a later view item carries the same
/// [supersession key](crate::Classified::with_key) and shows at least what it shows (a
/// newer view of the same file or of lines that cover its own, an edit of the file, a
/// rerun of the same command). Read newest first: linear in the items, times the parts
/// of one key seen later.
pub(super) fn superseded(p: &Planner<'_>) -> Vec<bool> {
    let mut later = Later::default();
    let mut out = vec![false; p.items.len()];
    for (i, item) in p.items.iter().enumerate().rev() {
        let Some(e) = p.history.entry(item.id) else {
            continue;
        };
        if let Some(key) = key_of(e.message()) {
            out[i] = later.supersedes(key, key_part_of(e.message()));
        }
    }
    out
}

/// The keys seen later: whole copies, and the parts of each key.
#[derive(Default)]
struct Later<'a> {
    whole: HashSet<&'a str>,
    parts: HashMap<&'a str, Vec<KeyPart>>,
}

impl<'a> Later<'a> {
    /// Whether what was seen later supersedes a copy of `part` of `key` (`None`: whole),
    /// then records it.
    fn supersedes(&mut self, key: &'a str, part: Option<KeyPart>) -> bool {
        match part {
            None => !self.whole.insert(key),
            Some(part) => {
                let parts = self.parts.entry(key).or_default();
                let covered = parts.iter().any(|later| later.covers(part));
                if !covered && part != KeyPart::Unknown {
                    parts.push(part); // a covered part or an unknown one covers nothing new
                }
                covered || self.whole.contains(key)
            }
        }
    }
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
    fn a_part_is_superseded_by_a_whole_copy_or_a_part_that_covers_it() {
        // Read newest first, as `superseded` does.
        let mut later = Later::default();
        assert!(!later.supersedes("a.py", Some(KeyPart::Lines(610, 620)))); // newest
        assert!(!later.supersedes("a.py", None)); // a whole view: not covered by a part
        assert!(later.supersedes("a.py", Some(KeyPart::Lines(580, 620)))); // the whole one covers it
        let mut later = Later::default();
        assert!(!later.supersedes("a.py", Some(KeyPart::Lines(1, 200))));
        assert!(later.supersedes("a.py", Some(KeyPart::Lines(120, 170))));
        assert!(!later.supersedes("a.py", Some(KeyPart::Lines(150, 250)))); // sticks out
        assert!(!later.supersedes("a.py", Some(KeyPart::Unknown))); // a tail: unknown lines
        assert!(!later.supersedes("b.py", Some(KeyPart::Lines(1, 5)))); // another key
        assert!(!later.supersedes("a.py", None));
        assert!(later.supersedes("a.py", None)); // whole after whole, as before
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
