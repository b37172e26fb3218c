use super::{Bill, CompactionCache, cache_table};
use crate::replay::Step;
use crate::report::{Row, Summary};
use crate::strategy::Event;

#[test]
fn only_compacting_requests_are_billed_and_the_reused_part_is_read() {
    let mut c = CompactionCache::default();
    let event = Some(Event {
        tier: 2,
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

#[test]
fn the_cache_table_compares_against_no_compaction() {
    let cache = CompactionCache {
        compactions: 1,
        rebilled: 40.0,
        reads: 5.0,
    };
    let policy = Summary {
        label: "policy".into(),
        total_tokens: 60,
        cache,
        ..Summary::default()
    };
    let none = Summary {
        label: "no compaction".into(),
        total_tokens: 100,
        ..Summary::default()
    };
    let t = cache_table(&[Row {
        transcript: "t".into(),
        summaries: vec![policy, none],
    }]);
    assert!(
        t.contains("| t | 1 | 40 | 40 | 5 | 60 | 0.600x | – |"),
        "{t}"
    );
}
