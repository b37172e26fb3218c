use super::SpanTally;
use crate::fate::Fate;
use crate::replay::Step;
use crate::spans::SpanOutcome;
use crate::tally::Tally;
use crate::tests::common::prepared;

#[test]
fn a_step_is_tallied_in_total_and_by_the_class_of_its_source() {
    let p = prepared(serde_json::json!([{"role": "user", "content": "hi"}]));
    let outcome = SpanOutcome {
        span: 0,
        source: 0,
        survived: true,
        fate: Fate::Verbatim,
    };
    let step = Step {
        spans: vec![outcome],
        ..Step::default()
    };
    let mut t = SpanTally::default();
    assert_eq!(t.all.share(), None);
    t.add_step(&step, &p);
    assert_eq!((t.all.total, t.by_class[1].survived), (1, 1));
}

#[test]
fn tallies_merge_by_adding() {
    let mut a = SpanTally {
        all: Tally {
            total: 2,
            survived: 1,
        },
        ..Default::default()
    };
    a.merge(&a.clone());
    assert_eq!(
        a.all,
        Tally {
            total: 4,
            survived: 2
        }
    );
}
