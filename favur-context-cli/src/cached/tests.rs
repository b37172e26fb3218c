use favur_context::{History, fuzzy, strict};

use super::PrefixCache;

#[test]
fn the_cached_share_is_the_unchanged_prefix_of_the_previous_request() {
    let mut h = History::new();
    h.pin(strict!(system: "You are a coding agent."));
    h.append(strict!(user: "Fix the test."));
    let mut cache = PrefixCache::default();
    assert_eq!(cache.measure(&h), 0.0); // nothing cached yet
    h.append(fuzzy!(assistant: "Looking."));
    h.append(fuzzy!(user: "Go on."));
    let share = cache.measure(&h);
    assert!(share > 0.5 && share < 1.0, "{share}");
}
