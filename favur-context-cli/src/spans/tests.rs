use super::{Span, SpanOutcome, SpanTally, candidates, quoted};
use crate::replay::{Fate, Step};
use crate::report::Tally;
use crate::test_support::prepared;

#[test]
fn a_span_is_found_only_whole() {
    let s = Span::new("return self._media_order", 3);
    assert!(s.found_in("x = return self._media_order()"));
    assert!(!s.found_in("return self._media"));
}

#[test]
fn quoted_strings_are_read_with_their_escapes_and_apostrophes_are_not_quotes() {
    let q = quoted(r#"sed -i 's/old_name(x)/new_name(x)/' a.py; don't "say \"hi\" now""#);
    assert_eq!(q, ["s/old_name(x)/new_name(x)/", r#"say \"hi\" now"#]);
}

#[test]
fn candidates_are_quoted_text_and_the_lines_of_commands_and_heredocs() {
    let cmds = ["cat <<'EOF' > fix.py\n    return self._media_order\nx = 1\nEOF".to_owned()];
    let c = candidates("I will replace 'the old media order'.", &cmds);
    assert_eq!(
        c,
        [
            "the old media order",
            "cat <<'EOF' > fix.py",
            "return self._media_order"
        ]
    );
}

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
