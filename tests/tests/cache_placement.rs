//! Prompt-cache placement: on the shared traces replayed with compaction, every request
//! rendered with breakpoints is the plain rendering plus at most 4 `cache_control`
//! markers, passes the strict Anthropic validator, and every breakpoint sits where the
//! next request's prefix still matches (when no compaction or pin came between); the
//! validator enforces the limit and where a marker may go.

mod common;

use common::{trace_files, traces_dir};
use favur_context::import::shell::ShellCommandClassifier;
use favur_context::import::{self, Format};
use favur_context::render::validate::{MAX_CACHE_BREAKPOINTS, Rule, validate_anthropic_strict};
use favur_context::render::{BlockAt, render_anthropic, render_anthropic_cached};
use favur_context::{Compactor, History, Message, Policy, Retention, Role};
use serde_json::{Value, json};

/// The request's blocks in order, `cache_control` taken off: (message index or `None`
/// for `system`, role, block).
fn blocks(request: &Value) -> Vec<(Option<usize>, String, Value)> {
    let strip = |b: &Value| {
        let mut b = b.clone();
        if let Value::Object(o) = &mut b {
            o.remove("cache_control");
        }
        b
    };
    let mut out: Vec<_> = request["system"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| (None, "system".to_owned(), strip(b)))
        .collect();
    for (i, m) in request["messages"].as_array().unwrap().iter().enumerate() {
        for b in m["content"].as_array().unwrap() {
            out.push((Some(i), m["role"].as_str().unwrap().to_owned(), strip(b)));
        }
    }
    out
}

/// The position of a breakpoint in [`blocks`].
fn position(request: &Value, at: BlockAt) -> usize {
    match at {
        BlockAt::System(i) => i,
        BlockAt::Message { message, block } => {
            let system = request["system"].as_array().map_or(0, Vec::len);
            let before: usize = request["messages"].as_array().unwrap()[..message]
                .iter()
                .map(|m| m["content"].as_array().unwrap().len())
                .sum();
            system + before + block
        }
    }
}

fn markers(v: &Value) -> usize {
    match v {
        Value::Object(o) => {
            usize::from(o.contains_key("cache_control")) + o.values().map(markers).sum::<usize>()
        }
        Value::Array(a) => a.iter().map(markers).sum(),
        _ => 0,
    }
}

#[test]
fn breakpoints_sit_where_the_next_request_still_matches_on_the_traces() {
    let Some(dir) = traces_dir() else { return };
    let (mut checked, mut kept, mut crossed, mut requests) = (0usize, 0usize, 0usize, 0usize);
    for path in trace_files(&dir) {
        let text = std::fs::read_to_string(&path).expect("readable trace");
        let messages = import::parse(Format::MiniSweAgent, &text)
            .and_then(|t| t.classify(&ShellCommandClassifier))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for window in [32_000, 128_000] {
            let mut h = History::new();
            let mut compactor = Compactor::new(Policy::for_window(window).expect("window"));
            let mut previous: Option<(Value, Vec<BlockAt>, usize, usize)> = None;
            for m in &messages {
                if m.classified.message().role == Role::Assistant {
                    compactor.compact(&mut h).unwrap();
                    let (request, placement) = render_anthropic_cached(&h);
                    let request = request.to_value();
                    requests += 1;
                    validate_anthropic_strict(&request)
                        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    assert!(markers(&request) <= MAX_CACHE_BREAKPOINTS);
                    assert_eq!(markers(&request), placement.breakpoints.len());
                    // The plain rendering, breakpoints aside.
                    assert_eq!(blocks(&request), blocks(&render_anthropic(&h).to_value()));
                    let now = blocks(&request);
                    let key = (h.compactions().len(), h.pinned().len());
                    if let Some((before, points, compactions, pins)) = &previous {
                        let old = blocks(before);
                        for at in points {
                            let p = position(before, *at);
                            let same = now.len() > p && now[..=p] == old[..=p];
                            if (*compactions, *pins) == key {
                                assert!(same, "{}: breakpoint {at:?} moved", path.display());
                                checked += 1;
                            } else {
                                crossed += 1;
                                kept += usize::from(same);
                            }
                        }
                    }
                    previous = Some((request, placement.breakpoints.clone(), key.0, key.1));
                }
                if m.pin {
                    h.pin(m.classified.clone());
                } else {
                    h.append(m.classified.clone());
                }
            }
        }
    }
    eprintln!(
        "{requests} requests, {checked} breakpoints checked, {kept} of {crossed} kept across a compaction or pin"
    );
    assert!(checked > 1000, "only {checked} breakpoints checked");
}

#[test]
fn the_entries_own_breakpoints_count_towards_the_limit() {
    let mut h = History::new();
    let cached = |m: Message| m.with_extension("cache_control", json!({"type": "ephemeral"}));
    h.pin(cached(Message::system("sys")).classify(Retention::Strict));
    for i in 0..6 {
        let m = Message::user(format!("step {i}"));
        let m = if i < 2 { cached(m) } else { m };
        h.append(m.classify(Retention::Strict));
        h.append(Message::assistant(format!("ok {i}")).classify(Retention::Fuzzy));
    }
    let (request, placement) = render_anthropic_cached(&h);
    assert_eq!(placement.existing, 3);
    assert_eq!(placement.breakpoints.len(), 1);
    assert_eq!(markers(&request.to_value()), MAX_CACHE_BREAKPOINTS);
    validate_anthropic_strict(&request.to_value()).unwrap();
}

#[test]
fn the_last_assistant_turn_is_not_the_stable_end() {
    let mut h = History::new();
    h.append(Message::user("go").classify(Retention::Strict));
    h.append(Message::assistant("thinking aloud").classify(Retention::Fuzzy));
    let (_, placement) = render_anthropic_cached(&h);
    assert_eq!(
        placement.stable_end,
        Some(BlockAt::Message {
            message: 0,
            block: 0
        })
    );
}

fn request_with(markers: usize, on: &str) -> Value {
    let mut content: Vec<Value> = (0..markers)
        .map(|i| json!({"type": "text", "text": format!("t{i}"), "cache_control": {"type": "ephemeral"}}))
        .collect();
    if on == "thinking" {
        content = vec![
            json!({"type": "thinking", "thinking": "x", "signature": "s", "cache_control": {"type": "ephemeral"}}),
        ];
    }
    json!({"messages": [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": content},
    ]})
}

#[test]
fn the_strict_validator_enforces_the_limit_and_the_placement() {
    validate_anthropic_strict(&request_with(4, "text")).unwrap();
    let e = validate_anthropic_strict(&request_with(5, "text")).unwrap_err();
    assert_eq!(e.rule, Rule::TooManyCacheBreakpoints { found: 5, max: 4 });
    let e = validate_anthropic_strict(&request_with(1, "thinking")).unwrap_err();
    assert!(matches!(e.rule, Rule::BadCacheControl(_)), "{e}");
    let bad_type = json!({"messages": [{"role": "user", "content": [
        {"type": "text", "text": "go", "cache_control": {"type": "forever"}}]}]});
    assert!(matches!(
        validate_anthropic_strict(&bad_type).unwrap_err().rule,
        Rule::BadCacheControl(_)
    ));
    let system = json!({"system": (0..5).map(|i| json!({"type": "text", "text": format!("s{i}"), "cache_control": {"type": "ephemeral", "ttl": "1h"}})).collect::<Vec<_>>(),
        "messages": [{"role": "user", "content": "go"}]});
    assert_eq!(
        validate_anthropic_strict(&system).unwrap_err().rule,
        Rule::TooManyCacheBreakpoints { found: 5, max: 4 }
    );
    // The lenient validator leaves breakpoints to the strict one.
    favur_context::render::validate::validate_anthropic(&request_with(5, "text")).unwrap();
}
