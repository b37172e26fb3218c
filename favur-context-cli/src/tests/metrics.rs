//! The metrics on small hand-made transcripts whose right answers are known.

use super::common;

use crate::replay::{Fate, Run, replay};
use crate::report::Summary;
use crate::search::{match_mask, match_trim, mean_tokens};
use crate::strategy::{MaskOld, NoCompaction, Strategy, TrimOldest};
use common::{PlainRenderer, call, chat, hand_rules, prepare, result};
use favur_context::Retention;
use favur_context::tokens::{HeuristicCounter, TokenCounter};
use serde_json::json;

fn run(p: &crate::replay::Prepared, s: &mut dyn Strategy) -> Run {
    replay(p, s, Some(&PlainRenderer), &mut |_, _| Ok(())).expect("replay")
}

/// Weight of one rendered block of the PlainRenderer: the tokens of its strings (each
/// followed by a newline) plus 4 framing tokens.
fn weight(role: &str, content: &str) -> f64 {
    f64::from(HeuristicCounter.count_text(&format!("{role}\n{content}\n")) + 4)
}

#[test]
fn cache_reuse_is_the_unchanged_prefix_share() {
    let rules = hand_rules();
    let messages = [
        ("system", "You are a careful agent."),
        ("user", "Fix the failing test in the parser module."),
        ("assistant", "Looking at it now."),
        ("user", "Also keep the public API unchanged please."),
        ("assistant", "Understood."),
    ];
    let p = prepare(chat(&messages), &rules);
    let r = run(&p, &mut NoCompaction);
    assert_eq!(r.steps.len(), 2);
    // The first request has no previous request.
    assert_eq!(r.steps[0].reuse, 0.0);
    // The second repeats the first two blocks exactly and adds two.
    let sys = weight("system", "You are a careful agent.");
    let task = weight("user", "Fix the failing test in the parser module.");
    let a1 = weight("assistant", "Looking at it now.");
    let u2 = weight("user", "Also keep the public API unchanged please.");
    let expected = (sys + task) / (sys + task + a1 + u2);
    assert!(
        (r.steps[1].reuse - expected).abs() < 1e-12,
        "{} vs {expected}",
        r.steps[1].reuse
    );
    // Effective cost: reused tokens at 10%.
    let s = Summary::of(&r, &p);
    let t0 = r.steps[0].tokens as f64;
    let t1 = r.steps[1].tokens as f64;
    let cost = t0 + t1 * (1.0 - 0.9 * expected);
    assert!((s.effective_cost() - cost).abs() < 1e-9);
    assert!((s.reuse_share() - t1 * expected / (t0 + t1)).abs() < 1e-12);
}

#[test]
fn a_change_at_the_front_breaks_the_prefix() {
    let rules = hand_rules();
    let long = "word ".repeat(200);
    let (u, a) = ("user", "assistant");
    let messages = [
        (u, long.as_str()),
        (a, "one"),
        (u, "two"),
        (a, "three"),
        (u, "four"),
        (a, "five"),
    ];
    let p = prepare(chat(&messages), &rules);
    // A budget that forces the long first message out at the second request only.
    let mut trim = TrimOldest { budget: 100 };
    let r = run(&p, &mut trim);
    assert_eq!(r.steps.len(), 3);
    assert!(
        r.steps[1].event.is_some(),
        "the trim fires before the second request"
    );
    assert_eq!(
        r.steps[1].reuse, 0.0,
        "the first block changed, nothing is reused"
    );
    assert!(
        r.steps[2].reuse > 0.0,
        "the next request reuses the trimmed prefix"
    );
}

/// user task; `ls` -> two paths; `cat src/parser.rs` -> two functions; a final answer
/// using `parse_expr` and `src/parser.rs`.
fn reference_transcript() -> serde_json::Value {
    json!([
        {"role": "user", "content": "Fix the bug."},
        call("c1", "ls src"),
        result("c1", "src/parser.rs\nsrc/lexer.rs"),
        call("c2", "cat src/parser.rs"),
        result("c2", "fn parse_expr() {}\nfn parse_stmt() {}"),
        {"role": "assistant", "content": "The bug is in parse_expr of src/parser.rs."},
    ])
}

#[test]
fn references_are_identifiers_first_seen_in_an_earlier_tool_output() {
    let p = prepare(reference_transcript(), &hand_rules());
    assert!(p.references(1).is_empty());
    let at3: Vec<_> = p
        .references(3)
        .iter()
        .map(|r| (r.identifier.as_str(), r.source))
        .collect();
    assert_eq!(at3, [("src/parser.rs", 2)]);
    let mut at5: Vec<_> = p
        .references(5)
        .iter()
        .map(|r| (r.identifier.as_str(), r.source))
        .collect();
    at5.sort();
    assert_eq!(at5, [("parse_expr", 4), ("src/parser.rs", 2)]);
    // src/lexer.rs and parse_stmt were never used again; the listing was.
    assert!(p.referenced_later(2) && p.referenced_later(4));
}

#[test]
fn every_reference_survives_without_compaction() {
    let p = prepare(reference_transcript(), &hand_rules());
    let s = Summary::of(&run(&p, &mut NoCompaction), &p);
    assert_eq!((s.refs.survived, s.refs.total), (3, 3));
}

#[test]
fn survival_by_class_and_rule_after_trimming_everything_consumed() {
    let rules = hand_rules();
    let p = prepare(reference_transcript(), &rules);
    // Budget 0: before each request everything but the in-flight tail goes.
    let r = run(&p, &mut TrimOldest { budget: 0 });
    // Request before message 3 holds only the `ls` output: src/parser.rs survives.
    assert!(r.steps[1].refs.iter().all(|o| o.survived));
    // Request before message 5 holds only the `cat` output: parse_expr survives,
    // src/parser.rs (from the dropped listing) is lost.
    let last = &r.steps[2].refs;
    let lost: Vec<_> = last.iter().filter(|o| !o.survived).collect();
    assert_eq!(lost.len(), 1);
    assert_eq!((lost[0].source, lost[0].fate), (2, Fate::Dropped));
    let s = Summary::of(&r, &p);
    assert_eq!((s.refs.survived, s.refs.total), (2, 3));
    let f = s.by_class[Retention::Forgettable.index()];
    assert_eq!((f.survived, f.total), (1, 2));
    let z = s.by_class[Retention::Fuzzy.index()];
    assert_eq!((z.survived, z.total), (1, 1));
    let listings = s.by_rule[&favur_context::import::rules::RuleRef::Rule(0)];
    assert_eq!((listings.refs.total, listings.lost_dropped), (2, 1));
}

#[test]
fn survival_is_presence_in_the_request_not_the_fate_of_the_source() {
    let p = prepare(reference_transcript(), &hand_rules());
    // Mask all but the newest output: the listing is masked before message 5, but
    // src/parser.rs is still in the request through the `cat src/parser.rs` call.
    let r = run(&p, &mut MaskOld::new(1));
    let o = r.steps[2]
        .refs
        .iter()
        .find(|o| o.source == 2)
        .expect("the reference to the listing");
    assert!(o.survived);
    assert_eq!(
        o.fate,
        Fate::Verbatim,
        "a masked output is shown capped, in place"
    );
    let s = Summary::of(&r, &p);
    assert_eq!((s.refs.survived, s.refs.total), (3, 3));
}

#[test]
fn mask_old_replaces_all_but_the_last_n_outputs() {
    let p = prepare(reference_transcript(), &hand_rules());
    let mut requests = Vec::new();
    replay(
        &p,
        &mut MaskOld::new(1),
        Some(&PlainRenderer),
        &mut |_, r| {
            requests.push(r.clone());
            Ok(())
        },
    )
    .unwrap();
    let last = requests.last().unwrap().to_string();
    assert!(
        !last.contains("src/lexer.rs"),
        "the older output is masked: {last}"
    );
    assert!(last.contains("compacted"), "{last}");
    assert!(
        last.contains("parse_stmt"),
        "the newest output stays: {last}"
    );
}

#[test]
fn baseline_search_matches_the_target_mean() {
    let rules = hand_rules();
    let mut messages = vec![json!({"role": "user", "content": "Fix the bug."})];
    for i in 0..12 {
        messages.push(call(&format!("c{i}"), &format!("cat src/file_{i}.rs")));
        messages.push(result(
            &format!("c{i}"),
            &format!("fn item_{i}() {{}}\n").repeat(20 + i),
        ));
    }
    messages.push(json!({"role": "assistant", "content": "done"}));
    let p = prepare(json!(messages), &rules);
    let full = mean_tokens(&p, &mut NoCompaction).unwrap();
    let target = full * 0.6;

    let (budget, mean) = match_trim(&p, target).unwrap();
    assert_eq!(mean, mean_tokens(&p, &mut TrimOldest { budget }).unwrap());
    assert!(
        (mean - target).abs() / target < 0.1,
        "trim mean {mean} vs target {target}"
    );
    // One token more or less of budget is not closer.
    for b in [budget.saturating_sub(1), budget + 1] {
        let m = mean_tokens(&p, &mut TrimOldest { budget: b }).unwrap();
        assert!((m - target).abs() >= (mean - target).abs() - 1e-9);
    }

    let (keep, mean) = match_mask(&p, target).unwrap();
    assert_eq!(mean, mean_tokens(&p, &mut MaskOld::new(keep)).unwrap());
    for k in [keep.saturating_sub(1).max(1), keep + 1] {
        let m = mean_tokens(&p, &mut MaskOld::new(k)).unwrap();
        assert!(
            (m - target).abs() >= (mean - target).abs() - 1e-9,
            "keep {k}: {m}"
        );
    }
    // An unreachable target gives the nearest end.
    assert_eq!(match_mask(&p, 0.0).unwrap().0, 1);
    assert_eq!(match_trim(&p, full * 2.0).unwrap().1, full);
}

#[test]
fn parts_of_dotted_and_path_words_count_but_not_substrings() {
    let p = prepare(
        json!([
            {"role": "user", "content": "Fix the query."},
            call("c1", "grep -rn execute django"),
            result("c1", "django/db/models/sql/compiler.py:1100: return compiler.execute_sql(result_type)\n12300 rows"),
            {"role": "assistant", "content": "The bug is in execute_sql of compiler.py, not at line 230."},
        ]),
        &hand_rules(),
    );
    let mut found: Vec<_> = p
        .references(3)
        .iter()
        .map(|r| r.identifier.as_str())
        .collect();
    found.sort();
    // `execute_sql` and `compiler.py` appeared as whole parts of longer words; `230` only
    // inside `12300`, which does not count.
    assert_eq!(found, ["compiler.py", "execute_sql"]);
    let s = Summary::of(&run(&p, &mut NoCompaction), &p);
    assert_eq!((s.refs.survived, s.refs.total), (2, 2));
}
