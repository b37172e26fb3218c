//! The cached-prefix figure: a prompt cache with Anthropic's rules over the requests of a
//! replay, the breakpoints placed by `render_anthropic_cached`.

use super::common;

use crate::cached::PrefixCache;
use crate::replay::{Prepared, replay};
use crate::report::Summary;
use crate::strategy::NoCompaction;
use crate::transcript::ClassifiedTranscript;
use common::{PlainRenderer, hand_rules, prepare};
use favur_context::import::Format;
use favur_context::{History, Message, Retention};
use serde_json::json;

#[test]
fn the_first_request_hits_nothing_and_a_grown_one_hits_its_prefix() {
    let mut h = History::new();
    h.pin(Message::system("You are a careful agent.").classify(Retention::Strict));
    h.append(
        Message::user("Fix the failing test in the parser module.").classify(Retention::Strict),
    );
    let mut cache = PrefixCache::default();
    assert_eq!(cache.measure(&h), 0.0);
    // The same request again: everything up to its last breakpoint is cached.
    assert_eq!(cache.measure(&h), 1.0);
    h.append(Message::assistant("Looking at it now.").classify(Retention::Fuzzy));
    h.append(Message::user("Keep the public API unchanged.").classify(Retention::Strict));
    let share = cache.measure(&h);
    assert!(share > 0.4 && share < 1.0, "{share}");
    // Another history's prefix is not this one's.
    let mut other = History::new();
    other.append(Message::user("Something else entirely.").classify(Retention::Strict));
    assert_eq!(cache.measure(&other), 0.0);
}

#[test]
fn the_replay_reports_the_mean_share() {
    let rules = hand_rules();
    let p = prepare(
        json!([
            {"role": "system", "content": "You are a careful agent."},
            {"role": "user", "content": "Fix the failing test in the parser module."},
            {"role": "assistant", "content": "Looking at it now."},
            {"role": "user", "content": "Also keep the public API unchanged please."},
            {"role": "assistant", "content": "Understood."},
        ]),
        &rules,
    );
    let run = replay(&p, &mut NoCompaction, Some(&PlainRenderer), &mut |_, _| {
        Ok(())
    })
    .unwrap();
    assert_eq!(run.steps[0].cached, 0.0);
    assert!(run.steps[1].cached > 0.0);
    let s = Summary::of(&run, &p);
    assert!((s.cached_share() - run.steps[1].cached / 2.0).abs() < 1e-12);
}

#[test]
fn a_gemini_transcript_replays_with_its_figures() {
    let rules = hand_rules();
    let doc = json!({
        "systemInstruction": {"parts": [{"text": "You are a careful agent."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Fix the failing test in the parser module."}]},
            {"role": "model", "parts": [
                {"functionCall": {"name": "bash", "args": {"command": "ls src"}}, "thoughtSignature": "c2ln"}]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "bash", "response": {"output": "src/parser.rs\nsrc/lib.rs"}}}]},
            {"role": "model", "parts": [{"text": "The parser is in src/parser.rs."}]},
        ],
    });
    assert_eq!(crate::transcript::detect_format(&doc), Format::Gemini);
    let t = ClassifiedTranscript::from_value("g", Format::Gemini, &doc, &rules).unwrap();
    let p = Prepared::new(t);
    let run = replay(&p, &mut NoCompaction, Some(&PlainRenderer), &mut |_, _| {
        Ok(())
    })
    .unwrap();
    assert_eq!(run.steps.len(), 2);
    assert!(run.steps[1].cached > 0.0);
    assert_eq!(p.references(4)[0].identifier, "src/parser.rs");
}
