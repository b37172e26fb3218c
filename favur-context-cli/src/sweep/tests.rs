use super::{Point, points, table};
use crate::report::Summary;

#[test]
fn points_put_each_strategy_at_its_mean_and_cost_against_no_compaction() {
    let policy = Summary {
        label: "policy".into(),
        requests: 2,
        total_tokens: 60,
        ..Summary::default()
    };
    let none = Summary {
        label: "no compaction".into(),
        requests: 2,
        total_tokens: 100,
        ..Summary::default()
    };
    let p = points(150_000, &[policy, none]);
    assert_eq!((p[0].mean_tokens, p[0].cost), (30.0, Some(0.6)));
    assert_eq!(p[1].cost, Some(1.0));
    assert_eq!(p[0].window, 150_000);
}

#[test]
fn the_table_has_a_row_per_point_with_its_window_in_thousands() {
    let p = Point {
        window: 200_000,
        label: "policy".into(),
        mean_tokens: 10476.0,
        spans: Some(0.923),
        refs: Some(0.981),
        cost: Some(0.671),
    };
    assert!(table(&[p]).contains("| 200k | policy | 10476 | 0.923 | 0.981 | 0.671 |"));
}
