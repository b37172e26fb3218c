//! Property: random histories (random classes, sizes, tool calls with one or several
//! results, errors, missing and late results), compacted by the engine at random windows
//! at every tier, always render to requests that pass both validators (strictly: no call
//! is left without a result).

mod common;

use common::render_valid;
use common::steps::{append, at_every_tier, run, step};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn compacted_views_always_render_valid_requests(
        steps in prop::collection::vec(step(), 1..30),
        run in run(),
    ) {
        let mut h = run.history();
        let mut compactor = run.budget.compactor();
        let mut k = 0;
        for step in &steps {
            append(&mut h, step, &mut k);
            // Compact before the next model request, as a live agent would.
            compactor.compact(&mut h).unwrap();
            render_valid(&h, true);
        }
        // Every tier, applied on top of whatever the replay left.
        at_every_tier(&h, run.budget, |forced| {
            render_valid(forced, true);
        });
    }
}
