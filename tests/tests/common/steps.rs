//! Random agent histories for property tests: the steps a run is made of (messages,
//! calls with one or several results, errors, missing and late results) and the policy
//! they are compacted with.

use std::num::NonZeroU8;

use favur_context::message::{Part, ToolResult};
use favur_context::{Compactor, History, Message, Policy, Retention, Role, ToolCall};
use proptest::prelude::*;

use super::class;
use serde_json::json;
use std::ops::Range;

/// One step of an agent run.
#[derive(Debug, Clone)]
pub enum Step {
    /// A user message of that class and size (words).
    User(Retention, usize),
    /// An assistant message of that class and size (words).
    Assistant(Retention, usize),
    /// An assistant turn of calls and their results.
    Calls(Calls),
}

/// An assistant turn of that class making calls, each with (class, size, is_error) of its
/// result; `grouped` puts all results in one tool message; `missing` leaves the last call
/// unanswered (the conversation goes on); `late` records a user message between the
/// calls and their results; `text` puts a text before the calls.
#[derive(Debug, Clone)]
pub struct Calls {
    pub class: Retention,
    pub results: Vec<(Retention, usize, bool)>,
    pub grouped: bool,
    pub missing: bool,
    pub late: bool,
    pub text: bool,
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
            .prop_map(|(class, results, grouped, missing, late, text)| {
                Step::Calls(Calls {
                    class,
                    results,
                    grouped,
                    missing,
                    late,
                    text,
                })
            }),
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
        Step::Calls(calls) => calls.append(h, k),
    }
}

impl Calls {
    /// Appends the turn and its results; `k` numbers the calls so ids are unique.
    fn append(&self, h: &mut History, k: &mut usize) {
        let ids: Vec<String> = self
            .results
            .iter()
            .map(|_| {
                *k += 1;
                format!("call_{k}")
            })
            .collect();
        let mut parts = Vec::new();
        if self.text {
            parts.push(Part::Text(words(20, *k)));
        }
        for id in &ids {
            parts.push(Part::ToolCall(Box::new(ToolCall::new(
                id.clone(),
                "bash",
                json!({"command": format!("run {id}")}),
            ))));
        }
        h.append(Message::new(Role::Assistant, parts).classify(self.class));
        if self.late {
            h.append(Message::user("meanwhile").classify(Retention::Strict));
        }
        let answered = if self.missing {
            ids.len() - 1
        } else {
            ids.len()
        };
        let results: Vec<(String, Retention, usize, bool)> = ids
            .iter()
            .zip(&self.results)
            .take(answered)
            .map(|(id, (c, n, e))| (id.clone(), *c, *n, *e))
            .collect();
        if self.grouped && results.len() > 1 {
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
        if self.missing {
            h.append(Message::user("continue").classify(Retention::Fuzzy));
        }
    }
}

/// The window and per-entry cap a random run is compacted with.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub window: u64,
    pub cap: Option<u32>,
}

/// Windows of 2k to 60k tokens, caps of 50 to 400 tokens or none.
pub fn budget() -> impl Strategy<Value = Budget> {
    budget_in(2_000..60_000, 50..400)
}

/// Windows in `windows`, caps in `caps` or none.
pub fn budget_in(windows: Range<u64>, caps: Range<u32>) -> impl Strategy<Value = Budget> {
    (windows, prop::option::of(caps)).prop_map(|(window, cap)| Budget { window, cap })
}

impl Budget {
    /// Its policy.
    pub fn policy(self) -> Policy {
        policy(self.window, self.cap)
    }

    /// A compactor with its policy.
    pub fn compactor(self) -> Compactor {
        Compactor::new(self.policy())
    }
}

/// How a random run starts: its budget, the system prompt pinned (`pin`), the task first
/// (`user_first`).
#[derive(Debug, Clone, Copy)]
pub struct Run {
    pub budget: Budget,
    pub pin: bool,
    pub user_first: bool,
}

/// Any start, with the usual [`budget`].
pub fn run() -> impl Strategy<Value = Run> {
    (budget(), any::<bool>(), any::<bool>()).prop_map(|(budget, pin, user_first)| Run {
        budget,
        pin,
        user_first,
    })
}

impl Run {
    /// The history it starts from (see [`started`]).
    pub fn history(self) -> History {
        started(self.pin, self.user_first)
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
pub fn at_every_tier(h: &History, budget: Budget, check: impl Fn(&History)) {
    at_every_tier_then_last(h, budget, &check, &check);
}

/// Every tier applied on top of `h` (a copy), the result checked with `tier`, then the
/// last tier on top of that, checked with `last`.
pub fn at_every_tier_then_last(
    h: &History,
    budget: Budget,
    mut tier: impl FnMut(&History),
    mut last: impl FnMut(&History),
) {
    let numbers: Vec<NonZeroU8> = (1..=budget.policy().tiers().len() as u8)
        .filter_map(NonZeroU8::new)
        .collect();
    let Some(&highest) = numbers.last() else {
        return;
    };
    for t in numbers {
        let mut forced = h.clone();
        let mut c = budget.compactor();
        c.compact_at(&mut forced, t).unwrap();
        tier(&forced);
        c.compact_at(&mut forced, highest).unwrap();
        last(&forced);
    }
}
