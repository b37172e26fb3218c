use super::{Bill, CompactionCache};
use crate::replay::Step;
use crate::strategy::Event;

#[test]
fn only_compacting_requests_are_billed_and_the_reused_part_is_read() {
    let mut c = CompactionCache::default();
    let event = Some(Event {
        tier: std::num::NonZeroU8::new(2),
        summarizer_calls: 1,
        fallbacks: 0,
    });
    c.add_step(&Step {
        tokens: 1000,
        reuse: 0.25,
        event,
        ..Step::default()
    });
    c.add_step(&Step {
        tokens: 1000,
        reuse: 0.99,
        ..Step::default()
    }); // no compaction: not counted
    assert_eq!((c.compactions, c.rebilled, c.reads), (1, 750.0, 250.0));
    assert_eq!(c.rebilled_each(), 750.0);
    assert_eq!(Bill::of(0, &Step::default()), None);
}
