//! Property: random histories (random classes, sizes, tool calls with one or several
//! results, errors, missing and late results), compacted by the engine at random windows
//! at every tier, always render to requests that pass both validators (strictly: no call
//! is left without a result).

mod common;

use common::render_valid;
use favur_context::{
    Compactor, History, Message, Part, Policy, Retention, Role, ToolCall, ToolResult,
};
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone)]
enum Step {
    User(Retention, usize),
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

use common::class;

fn step() -> impl Strategy<Value = Step> {
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

fn words(n: usize, seed: usize) -> String {
    (0..n)
        .map(|i| format!("w{} ", (i * 7 + seed) % 97))
        .collect()
}

/// Appends one step; `k` numbers the calls so ids are unique.
fn append(h: &mut History, step: &Step, k: &mut usize) {
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

fn policy(window: u64, cap: Option<u32>) -> Policy {
    Policy::builder()
        .window_tokens(window)
        .entry_cap_tokens(cap)
        .build()
        .expect("valid policy")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn compacted_views_always_render_valid_requests(
        steps in prop::collection::vec(step(), 1..30),
        window in 2_000u64..60_000,
        cap in prop::option::of(50u32..400),
        pin in any::<bool>(),
        user_first in any::<bool>(),
    ) {
        let mut h = History::new();
        if pin {
            h.pin(Message::system("You are a coding agent.").classify(Retention::Strict));
        }
        if user_first {
            h.append(Message::user("the task").classify(Retention::Strict));
        }
        let mut compactor = Compactor::new(policy(window, cap));
        let mut k = 0;
        for step in &steps {
            append(&mut h, step, &mut k);
            // Compact before the next model request, as a live agent would.
            compactor.compact(&mut h).unwrap();
            render_valid(&h, true);
        }
        // Every tier, applied on top of whatever the replay left.
        let tiers = compactor.policy().tiers().len() as u8;
        for tier in 1..=tiers {
            let mut forced = h.clone();
            let mut c = Compactor::new(policy(window, cap));
            c.compact_at(&mut forced, tier).unwrap();
            render_valid(&forced, true);
            c.compact_at(&mut forced, tiers).unwrap();
            render_valid(&forced, true);
        }
    }
}
