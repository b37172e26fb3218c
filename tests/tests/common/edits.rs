//! Hand-made compactions (shared with the CLI's tests through `#[path]`).

use favur_context::compact::{Compaction, Edit};
use favur_context::{EntryId, Store};

/// Drops entry `id` from the view of `store` with a compaction record of `tier`, as a
/// compactor would; panics if the store refuses it.
#[track_caller]
pub fn drop_at<S: Store>(store: &mut S, tier: u8, id: EntryId) {
    let compaction = Compaction {
        tier,
        edits: vec![Edit::Drop { id }],
        usage_after: None,
    };
    if let Err(e) = Store::apply(store, compaction) {
        panic!("dropping {id} at tier {tier}: {e}");
    }
}
