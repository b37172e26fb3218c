//! Property: histories of every shape a caller can build (call ids reused across turns,
//! repeated inside one message, empty; results missing, out of order, grouped; ending with
//! a partly answered in-flight tail), compacted or not, render to requests both validators
//! accept: strictly whenever no call is left open at the end.

mod common;

use common::render_valid;
use favur_context::{
    Compactor, History, Message, Part, Policy, Retention, Role, ToolCall, ToolResult,
};
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone, Copy)]
enum Id {
    Fresh,
    /// The one id every turn may reuse.
    Shared,
    /// The same id as the call before it in the message.
    Repeat,
    Empty,
}

#[derive(Debug, Clone)]
enum Step {
    User(usize),
    Assistant(usize),
    /// The calls (id, answered), results grouped, results reversed, a text part.
    Calls(Vec<(Id, bool)>, bool, bool, bool),
}

fn id() -> impl Strategy<Value = Id> {
    prop_oneof![
        4 => Just(Id::Fresh),
        2 => Just(Id::Shared),
        1 => Just(Id::Repeat),
        1 => Just(Id::Empty),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1usize..300).prop_map(Step::User),
        (1usize..100).prop_map(Step::Assistant),
        (
            prop::collection::vec((id(), prop::bool::weighted(0.8)), 1..5),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(ids, grouped, reversed, text)| Step::Calls(ids, grouped, reversed, text)),
    ]
}

/// `n` words of text, told apart by `seed`.
fn words(n: usize, seed: usize) -> String {
    format!("{}{seed}", "word ".repeat(n))
}

/// Appends one step (`k` numbers fresh ids); returns whether calls are left open.
fn append(h: &mut History, step: &Step, k: &mut usize) -> bool {
    match step {
        Step::User(n) => {
            h.append(Message::user(words(*n, *k)).classify(Retention::Fuzzy));
            false
        }
        Step::Assistant(n) => {
            h.append(Message::assistant(words(*n, *k)).classify(Retention::Fuzzy));
            false
        }
        Step::Calls(ids, grouped, reversed, text) => {
            let mut made: Vec<(String, bool)> = Vec::new();
            for (kind, answered) in ids {
                *k += 1;
                let id = match kind {
                    Id::Fresh => format!("c{k}"),
                    Id::Shared => "shared".to_owned(),
                    Id::Repeat => made.last().map_or("shared".to_owned(), |m| m.0.clone()),
                    Id::Empty => String::new(),
                };
                made.push((id, *answered));
            }
            let mut parts = Vec::new();
            if *text {
                parts.push(Part::Text(words(10, *k)));
            }
            parts.extend(made.iter().map(|(id, _)| {
                Part::ToolCall(Box::new(ToolCall::new(
                    id.clone(),
                    "bash",
                    json!({"command": id}),
                )))
            }));
            h.append(Message::new(Role::Assistant, parts).classify(Retention::Fuzzy));
            let mut results: Vec<&(String, bool)> = made.iter().filter(|m| m.1).collect();
            if *reversed {
                results.reverse();
            }
            if *grouped && results.len() > 1 {
                let parts = results
                    .iter()
                    .map(|(id, _)| {
                        Part::ToolResult(ToolResult {
                            call_id: id.clone(),
                            content: words(30, id.len()),
                            is_error: false,
                        })
                    })
                    .collect();
                h.append(Message::new(Role::Tool, parts).classify(Retention::Forgettable));
            } else {
                for (id, _) in &results {
                    h.append(
                        Message::tool_result(id.clone(), words(30, id.len()), false)
                            .classify(Retention::Forgettable),
                    );
                }
            }
            results.len() < made.len()
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn every_shape_renders_what_the_validators_accept(
        steps in prop::collection::vec(step(), 1..16),
        window in prop::option::of(1_000u64..20_000),
        pin in any::<bool>(),
    ) {
        let mut h = History::new();
        if pin {
            h.pin(Message::system("You are a coding agent.").classify(Retention::Strict));
        }
        let mut compactor = window.map(|w| {
            Compactor::new(Policy::builder().window_tokens(w).build().expect("valid policy"))
        });
        let mut k = 0;
        let mut open = false;
        for step in &steps {
            open = append(&mut h, step, &mut k);
            if let Some(c) = &mut compactor {
                c.compact(&mut h).unwrap();
            }
            // Mid-conversation, the last turn's calls are in flight: non-strict.
            render_valid(&h, false);
        }
        // At the end: strictly valid unless the tail is partly answered.
        render_valid(&h, !open);
    }
}
