use super::{Run, Step, replay};
use crate::engine::LibRenderer;
use crate::strategy::NoCompaction;
use crate::tests::common::{four_turns, prepared};

#[test]
fn references_are_identifiers_an_assistant_names_from_an_earlier_output() {
    let p = prepared(serde_json::json!([
        {"role": "user", "content": "fix it"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "src/main.rs"},
        {"role": "assistant", "content": "open src/main.rs"},
    ]));
    assert_eq!(
        p.references(3).first().map(|r| r.identifier.as_str()),
        Some("src/main.rs")
    );
}

#[test]
fn the_mean_is_over_the_steps() {
    let step = |tokens| Step {
        tokens,
        ..Step::default()
    };
    let r = Run {
        steps: vec![step(10), step(20)],
        ..Run::default()
    };
    assert_eq!(r.mean_tokens(), 15.0);
}

#[test]
fn a_replay_renders_one_request_per_assistant_turn() -> Result<(), crate::ReplayError> {
    let prepared = four_turns();
    let mut requests = Vec::new();
    let renderer = LibRenderer::default();
    let run = replay(
        &prepared,
        &mut NoCompaction,
        Some(&renderer),
        &mut |step, request| {
            requests.push((step, request.clone()));
            Ok(())
        },
    )?;
    assert_eq!(run.steps.len(), 2);
    assert_eq!(requests.iter().map(|r| r.0).collect::<Vec<_>>(), [0, 1]);
    assert!(run.steps[1].reuse > 0.0); // the first request is a prefix of the second
    Ok(())
}
