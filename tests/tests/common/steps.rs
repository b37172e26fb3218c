//! Random agent histories for property tests: the steps a run is made of (messages,
//! calls with one or several results, errors, missing and late results) and the policy
//! they are compacted with.

use favur_context::{
    Compactor, History, Message, Part, Policy, Retention, Role, ToolCall, ToolResult,
};
use proptest::prelude::*;

use super::class;
use serde_json::json;

/// One step of an agent run.
#[derive(Debug, Clone)]
pub enum Step {
    /// A user message of that class and size (words).
    User(Retention, usize),
    /// An assistant message of that class and size (words).
    Assistant(Retention, usize),
    /// Calls, each with (class, size, is_error); `grouped` puts all results in one tool
    /// message; `missing` leaves the last call unanswered (the conversation goes on);
    /// `late` records a user message between the calls and their results.
    Calls {
        class: Retention,
        results: Vec<(Retention, usize, bool)>,
        grouped: bool,
        missing: bool,
        late: bool,
        text: bool,
    },
}

/// Any step.
pub fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (class(), 1usize..400).prop_map(|(c, n)| Step::User(c, n)),
        (class(), 1usize..200).prop_map(|(c, n)| Step::Assistant(c, n)),
        (
            class(),
            prop::collection::vec((class(), 0usize..1500, any::<bool>()), 1..4),
            any::<bool>(),
            prop::bool::weighted(0.1),
            prop::bool::weighted(0.1),
            any::<bool>(),
        )
            .prop_map(
                |(class, results, grouped, missing, late, text)| Step::Calls {
                    class,
                    results,
                    grouped,
                    missing,
                    late,
                    text,
                }
            ),
    ]
}

/// `n` words, varied by `seed`.
pub fn words(n: usize, seed: usize) -> String {
    (0..n)
        .map(|i| format!("w{} ", (i * 7 + seed) % 97))
        .collect()
}

/// Appends one step; `k` numbers the calls so ids are unique.
pub fn append(h: &mut History, step: &Step, k: &mut usize) {
    match step {
        Step::User(c, n) => {
            h.append(Message::user(words(*n, *k)).classify(*c));
        }
        Step::Assistant(c, n) => {
            h.append(Message::assistant(words(*n, *k)).classify(*c));
        }
        Step::Calls {
            class,
            results,
            grouped,
            missing,
            late,
            text,
        } => {
            let ids: Vec<String> = results
                .iter()
                .map(|_| {
                    *k += 1;
                    format!("call_{k}")
                })
                .collect();
            let mut parts = Vec::new();
            if *text {
                parts.push(Part::Text(words(20, *k)));
            }
            for id in &ids {
                parts.push(Part::ToolCall(ToolCall::new(
                    id.clone(),
                    "bash",
                    json!({"command": format!("run {id}")}),
                )));
            }
            h.append(Message::new(Role::Assistant, parts).classify(*class));
            if *late {
                h.append(Message::user("meanwhile").classify(Retention::Strict));
            }
            let answered = if *missing { ids.len() - 1 } else { ids.len() };
            let results: Vec<(String, Retention, usize, bool)> = ids
                .iter()
                .zip(results)
                .take(answered)
                .map(|(id, (c, n, e))| (id.clone(), *c, *n, *e))
                .collect();
            if *grouped && results.len() > 1 {
                let strictest = results
                    .iter()
                    .map(|r| r.1)
                    .max()
                    .unwrap_or(Retention::Fuzzy);
                let parts = results
                    .iter()
                    .map(|(id, _, n, e)| {
                        Part::ToolResult(ToolResult {
                            call_id: id.clone(),
                            content: words(*n, *n),
                            is_error: *e,
                        })
                    })
                    .collect();
                h.append(Message::new(Role::Tool, parts).classify(strictest));
            } else {
                for (id, c, n, e) in results {
                    h.append(Message::tool_result(id, words(n, n), e).classify(c));
                }
            }
            if *missing {
                h.append(Message::user("continue").classify(Retention::Fuzzy));
            }
        }
    }
}

/// A policy for `window` tokens with an optional per-entry cap.
pub fn policy(window: u64, cap: Option<u32>) -> Policy {
    Policy::builder()
        .window_tokens(window)
        .entry_cap_tokens(cap)
        .build()
        .expect("valid policy")
}

/// A history for a random run: the system prompt pinned (`pin`), the task first
/// (`user_first`).
pub fn started(pin: bool, user_first: bool) -> History {
    let mut h = History::new();
    if pin {
        h.pin(Message::system("You are a coding agent.").classify(Retention::Strict));
    }
    if user_first {
        h.append(Message::user("the task").classify(Retention::Strict));
    }
    h
}

/// Every tier applied on top of `h` (a copy), then the last one, each result checked.
pub fn at_every_tier(h: &History, window: u64, cap: Option<u32>, check: impl Fn(&History)) {
    let tiers = policy(window, cap).tiers().len() as u8;
    for tier in 1..=tiers {
        let mut forced = h.clone();
        let mut c = Compactor::new(policy(window, cap));
        c.compact_at(&mut forced, tier).unwrap();
        check(&forced);
        c.compact_at(&mut forced, tiers).unwrap();
        check(&forced);
    }
}
