use favur_context::import::rules::Rules;

use super::{Row, Summary, Tally, breakdown, cache_table, side_by_side};
use crate::cache_bill::CompactionCache;
use crate::replay::replay;
use crate::strategy::NoCompaction;
use crate::tests::common::{four_turns, rules};

#[test]
fn a_share_exists_only_when_something_was_counted() {
    assert_eq!(
        Tally {
            total: 4,
            survived: 3
        }
        .share(),
        Some(0.75)
    );
    assert_eq!(Tally::default().share(), None);
}

#[test]
fn a_summary_counts_the_requests_of_a_run() -> Result<(), crate::ReplayError> {
    let prepared = four_turns();
    let run = replay(&prepared, &mut NoCompaction, None, &mut |_, _| Ok(()))?;
    let s = Summary::of(&run, &prepared);
    assert_eq!((s.requests, s.refused), (2, 0));
    Ok(())
}

#[test]
fn means_and_shares_are_per_request_and_zero_when_empty() {
    assert_eq!(Summary::default().mean_tokens(), 0.0);
    let mut a = Summary {
        requests: 2,
        total_tokens: 10,
        ..Summary::default()
    };
    a.merge(&Summary {
        requests: 1,
        total_tokens: 20,
        ..Summary::default()
    });
    assert_eq!(a.mean_tokens(), 10.0);
    let s = Summary {
        total_tokens: 100,
        reused_tokens: 25.0,
        ..Default::default()
    };
    assert_eq!(s.reuse_share(), 0.25);
    let s = Summary {
        requests: 4,
        cached_shares: 3.0,
        ..Default::default()
    };
    assert_eq!(s.cached_share(), 0.75);
}

#[test]
fn reused_tokens_cost_a_tenth() {
    let s = Summary {
        total_tokens: 100,
        reused_tokens: 50.0,
        ..Default::default()
    };
    assert!((s.effective_cost() - 55.0).abs() < 1e-9);
    assert!(super::COST_MODEL.contains("0.10"));
}

#[test]
fn compactions_are_counted_per_hundred_requests() {
    let mut s = Summary {
        requests: 200,
        ..Default::default()
    };
    s.compactions.insert(Some(std::num::NonZeroU8::MIN), 3);
    assert_eq!(s.compactions_per_100(), 1.5);
}

#[test]
fn the_tables_have_a_row_per_transcript_and_a_line_per_class() {
    let policy = Summary {
        label: "policy".into(),
        ..Summary::default()
    };
    let t = side_by_side(&[Row {
        transcript: "t".into(),
        summaries: vec![policy.clone()],
    }]);
    assert!(t.contains("| t | policy |"));
    let rules: Rules = rules("fuzzy");
    assert!(breakdown(&[policy], &rules).contains("forgettable"));
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
