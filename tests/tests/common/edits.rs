//! Hand-made compactions (shared with the CLI's tests through `#[path]`).

use std::num::NonZeroU8;

use favur_context::compact::{Compaction, Edit};
use favur_context::{EntryId, Store};

/// Drops entry `id` from the view of `store` with a compaction record of `tier` (from
/// 1), as a compactor would; panics if `tier` is 0 or the store refuses it.
#[track_caller]
pub fn drop_at<S: Store>(store: &mut S, tier: u8, id: EntryId) {
    if let Err(e) = Store::apply(store, drop_record(tier, id)) {
        panic!("dropping {id} at tier {tier}: {e}");
    }
}

/// The compaction record of `tier` (from 1) that drops entry `id`, as a compactor writes
/// it; panics if `tier` is 0.
#[track_caller]
pub fn drop_record(tier: u8, id: EntryId) -> Compaction {
    Compaction {
        tier: NonZeroU8::new(tier).expect("tiers are numbered from 1"),
        edits: vec![Edit::Drop { id }],
        usage_after: None,
    }
}
