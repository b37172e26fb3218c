//! Where compactions fall among the entry ids.

use std::num::NonZeroU8;

use super::positions;
use crate::compact::Summary;
use crate::history::view::{Compaction, Edit};
use crate::model::entry::EntryId;

fn summarizing(first: u64) -> Compaction {
    Compaction {
        tier: NonZeroU8::MIN,
        edits: vec![Edit::Summarize {
            summary: Summary::recorded(EntryId(first)),
        }],
        usage_after: None,
    }
}

fn dropping() -> Compaction {
    Compaction {
        tier: NonZeroU8::new(3).unwrap(),
        edits: vec![Edit::Drop { id: EntryId(0) }],
        usage_after: None,
    }
}

#[test]
fn a_compaction_without_summaries_falls_before_the_next_one_that_has_some() {
    let at = positions(
        &[dropping(), summarizing(7), dropping(), summarizing(12)],
        0,
    );
    assert_eq!(at, [Some(7), Some(7), Some(12), Some(12)]);
}

#[test]
fn compactions_without_summaries_at_the_end_fall_after_every_entry() {
    let at = positions(&[summarizing(5), dropping(), dropping()], 0);
    assert_eq!(at, [Some(5), None, None]);
    assert_eq!(positions(&[dropping()], 3), [None]);
}

#[test]
fn no_compaction_falls_before_the_floor() {
    let at = positions(&[summarizing(2), dropping(), summarizing(9)], 4);
    assert_eq!(at, [Some(4), Some(9), Some(9)]);
}
