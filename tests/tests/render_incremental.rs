//! Property: a `Renderer` kept across the requests of a run renders, at every step, byte
//! for byte what `render_openai`, `render_anthropic` and `render_responses` render from scratch: over random
//! histories (every step of `common::steps`, pins of every role along the way, blank
//! turns, reused call ids, results whose call is long gone, clones that diverge and are rendered in turn), compacted by the
//! engine at random windows and forced at every tier, rendered after some steps and not
//! others (so that a render catches up on several entries at once). The same for the
//! bytes (`Renderer::openai_bytes` and its kin against `serde_json::to_vec`).

mod common;

use std::num::NonZeroU8;

use common::steps::{Step, append, budget, step};
use favur_context::message::Part;
use favur_context::render::{Renderer, render_anthropic, render_openai, render_responses};
use favur_context::{History, Message, Retention, Role, ToolCall};
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone)]
enum Event {
    Step(Step),
    /// A system pin (sent first) or a user pin (in place).
    Pin {
        system: bool,
    },
    /// A turn with only blank text.
    Blank {
        assistant: bool,
    },
    /// A call with the id every `Reused` call has, answered or not.
    Reused {
        answered: bool,
    },
    /// A result for the reused id with no call before it in this step.
    StrayResult,
    /// A clone of the history is put aside (the run goes on in the original).
    Clone,
    /// The run goes on in the clone put aside, and the original is put aside: the two
    /// have the same ids for different entries.
    Switch,
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        6 => step().prop_map(Event::Step),
        1 => any::<bool>().prop_map(|system| Event::Pin { system }),
        1 => any::<bool>().prop_map(|assistant| Event::Blank { assistant }),
        1 => any::<bool>().prop_map(|answered| Event::Reused { answered }),
        1 => Just(Event::StrayResult),
        1 => Just(Event::Clone),
        1 => Just(Event::Switch),
    ]
}

fn record(h: &mut History, aside: &mut Option<History>, event: &Event, k: &mut usize) {
    match event {
        Event::Step(s) => append(h, s, k),
        Event::Pin { system: true } => {
            h.pin(Message::system(format!("rule {k}")).classify(Retention::Strict));
        }
        Event::Pin { system: false } => {
            h.pin(Message::user(format!("the task, part {k}")).classify(Retention::Strict));
        }
        Event::Blank { assistant } => {
            let role = if *assistant {
                Role::Assistant
            } else {
                Role::User
            };
            h.append(Message::new(role, vec![Part::Text("  ".into())]).classify(Retention::Fuzzy));
        }
        Event::Reused { answered } => {
            let call = ToolCall::new("same/id", "bash", json!({"command": "ls"}));
            h.append(Message::assistant_calls([call]).classify(Retention::Fuzzy));
            if *answered {
                h.append(
                    Message::tool_result("same/id", "a.rs", false).classify(Retention::Forgettable),
                );
            }
        }
        Event::StrayResult => {
            h.append(Message::tool_result("same/id", "late", true).classify(Retention::Strict));
        }
        Event::Clone => *aside = Some(h.clone()),
        Event::Switch => {
            if let Some(other) = aside {
                std::mem::swap(h, other);
            }
        }
    }
    *k += 1;
}

/// The renderer's output equals a render from scratch, as JSON text.
fn same(renderer: &mut Renderer, h: &History) -> Result<(), TestCaseError> {
    let fresh = serde_json::to_string(&render_openai(h)).unwrap();
    let kept = serde_json::to_string(renderer.openai(h)).unwrap();
    prop_assert_eq!(kept, fresh, "openai");
    let fresh = serde_json::to_string(&render_anthropic(h).to_value()).unwrap();
    let kept = serde_json::to_string(&renderer.anthropic(h).to_value()).unwrap();
    prop_assert_eq!(kept, fresh, "anthropic");
    let fresh = serde_json::to_string(&render_responses(h)).unwrap();
    let kept = serde_json::to_string(renderer.responses(h)).unwrap();
    prop_assert_eq!(kept, fresh, "responses");
    Ok(())
}

/// The renderer's bytes equal `serde_json::to_vec` of a render from scratch, in every
/// format (compared as text so that a failure shows where they part).
fn same_bytes(renderer: &mut Renderer, h: &History) -> Result<(), TestCaseError> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let fresh = serde_json::to_vec(&render_openai(h)).unwrap();
    prop_assert_eq!(text(renderer.openai_bytes(h)), text(&fresh), "openai bytes");
    let fresh = serde_json::to_vec(&render_anthropic(h)).unwrap();
    prop_assert_eq!(
        text(renderer.anthropic_bytes(h)),
        text(&fresh),
        "anthropic bytes"
    );
    let fresh = serde_json::to_vec(&render_responses(h)).unwrap();
    prop_assert_eq!(
        text(renderer.responses_bytes(h)),
        text(&fresh),
        "responses bytes"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn kept_renderer_renders_what_a_fresh_render_does(
        events in prop::collection::vec((event(), any::<bool>(), any::<bool>()), 1..40),
        budget in budget(),
        assistant_first in any::<bool>(),
    ) {
        let mut h = History::new();
        if assistant_first {
            h.append(Message::assistant("picking up").classify(Retention::Fuzzy));
        }
        // One renderer for both formats, and one asked only for OpenAI then Anthropic
        // on alternate renders (each format's state on its own).
        let mut both = Renderer::new();
        let mut alternate = Renderer::new();
        // One asked only for bytes, on the same renders (its values are rendered through
        // the bytes calls; the bytes must follow every resume of them).
        let mut bytes = Renderer::new();
        let mut compactor = budget.compactor();
        let mut k = 0;
        let mut aside = None;
        for (i, (event, compact, render)) in events.iter().enumerate() {
            record(&mut h, &mut aside, event, &mut k);
            if *compact {
                compactor.compact(&mut h).unwrap();
            }
            if *render || i + 1 == events.len() {
                same(&mut both, &h)?;
                same_bytes(&mut bytes, &h)?;
                // Bytes asked after values of the same renderer.
                same_bytes(&mut both, &h)?;
                if i % 2 == 0 {
                    prop_assert_eq!(alternate.openai(&h), &render_openai(&h));
                } else {
                    prop_assert_eq!(alternate.anthropic(&h), &render_anthropic(&h));
                }
            }
        }
        // Every tier, applied on top of whatever the run left, then the run goes on.
        let tiers = compactor.policy().tiers().len() as u8;
        for tier in (1..=tiers).filter_map(NonZeroU8::new) {
            let mut c = budget.compactor();
            c.compact_at(&mut h, tier).unwrap();
            same(&mut both, &h)?;
            same_bytes(&mut bytes, &h)?;
            record(&mut h, &mut aside, &Event::Step(Step::User(Retention::Fuzzy, 3)), &mut k);
            same(&mut both, &h)?;
            same_bytes(&mut bytes, &h)?;
        }
    }
}
