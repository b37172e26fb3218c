//! The settle rounds: a chain of tool exchanges where keeping each small run makes the
//! run before it too small, one round at a time, until the rounds run out.

use std::num::NonZeroU8;

use super::MAX_SETTLE_ROUNDS;
use crate::compact::plan::Plan;
use crate::compact::policy::Policy;
use crate::history::History;
use crate::model::message::{Message, Part, ToolCall};
use crate::model::retention::Retention;

/// The task, a long fuzzy note, then `links` exchanges: an assistant entry (five words and
/// a call with a 200-word command), a strict "ok" that closes the run, and the call's
/// five-word result. Kept alone, a result makes its call stay (calls only), which leaves
/// the run of the previous result and this call's text too small for a summary: keeping
/// that run makes the previous call stay, and so on down the chain, a round per link.
fn chain(links: usize) -> History {
    let words = |n: usize| "word ".repeat(n);
    let mut h = History::new();
    h.append(Message::user("the task").classify(Retention::Strict));
    h.append(Message::user(words(400)).classify(Retention::Fuzzy));
    for k in 0..links {
        let call = ToolCall::new(
            format!("c{k}"),
            "bash",
            serde_json::json!({ "command": words(200) }),
        );
        let mut m = Message::assistant_calls(vec![call]);
        m.parts.insert(0, Part::Text(words(5)));
        h.append(m.classify(Retention::Fuzzy));
        h.append(Message::user("ok").classify(Retention::Strict));
        let result = Message::tool_result(format!("c{k}"), words(5), false);
        h.append(result.classify(Retention::Fuzzy));
    }
    h.append(Message::user("ok").classify(Retention::Strict));
    h.append(Message::assistant("done").classify(Retention::Fuzzy));
    h
}

#[test]
fn each_link_of_the_chain_takes_one_more_round() {
    let rounds: Vec<usize> = (0..4)
        .map(|links| Plan::new(&chain(links), &Policy::default(), NonZeroU8::MIN).settle_rounds())
        .collect();
    assert_eq!(rounds, [1, 2, 3, 4]);
}

#[test]
fn a_plan_that_settles_in_the_last_round_is_settled() {
    let plan = Plan::new(&chain(3), &Policy::default(), NonZeroU8::MIN);
    assert_eq!(plan.settle_rounds(), MAX_SETTLE_ROUNDS);
    assert!(!plan.unsettled());
    assert_eq!(plan.runs().len(), 1);
}

#[test]
fn a_chain_longer_than_the_rounds_is_reported_unsettled() {
    let plan = Plan::new(&chain(4), &Policy::default(), NonZeroU8::MIN);
    assert_eq!(plan.settle_rounds(), MAX_SETTLE_ROUNDS);
    assert!(plan.unsettled());
    // The run the next round would have kept is still in the plan.
    assert_eq!(plan.runs().len(), 2);
}

#[test]
fn only_a_plan_the_planner_gave_up_on_took_no_rounds() {
    let empty = Plan::new(&History::new(), &Policy::default(), NonZeroU8::MIN);
    assert_eq!((empty.settle_rounds(), empty.unsettled()), (1, false));
    // Tier 9 is not in the policy: nothing is planned.
    let none = Plan::new(&chain(4), &Policy::default(), NonZeroU8::new(9).unwrap());
    assert_eq!((none.settle_rounds(), none.unsettled()), (0, false));
}
