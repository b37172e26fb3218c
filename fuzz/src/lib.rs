//! Fuzz targets for favur-context: plain functions `fn(&[u8])` that run the library on
//! arbitrary input and panic only when the library breaks a promise (it panicked itself,
//! or an invariant failed: a loaded history renders to a request a validator rejects, a
//! reopened journal differs from the one written, ...).
//!
//! They run on the stable toolchain with the driver in `src/bin/fuzz.rs` (seeded
//! mutations of a corpus, a time budget, panics caught and reported), and under
//! cargo-fuzz where nightly exists (`fuzz/libfuzzer`, outside the workspace). See
//! `docs/hostile.md`.
//!
//! ```
//! // Every target takes any bytes without panicking.
//! for (_, target) in favur_context_fuzz::TARGETS {
//!     target(b"");
//!     target(b"{\"journal\":{\"format\":1,\"framing_tokens\":4}}\n");
//! }
//! ```

use favur_context::import::rules::Rules;
use favur_context::import::{Format, parse};
use favur_context::journal::OpenOptions;
use favur_context::render::validate::{validate_anthropic, validate_gemini, validate_openai};
use favur_context::render::{render_anthropic, render_gemini, render_openai};
use favur_context::{Compactor, History, Policy};

mod model;
mod seeds;

pub use model::model;
pub use seeds::{MODEL_REGRESSIONS, seeds};

/// A fuzz target: any bytes in, a panic only for a broken promise.
pub type Target = fn(&[u8]);

/// Every target, by name.
pub const TARGETS: &[(&str, Target)] = &[
    ("journal", journal),
    ("openai", openai),
    ("anthropic", anthropic),
    ("mini_swe", mini_swe),
    ("gemini", gemini),
    ("mcp", mcp),
    ("responses", responses),
    ("policy", policy),
    ("rules", rules),
    ("validate", validate),
    ("model", model),
];

/// The target named `name`.
///
/// ```
/// assert!(favur_context_fuzz::target("journal").is_some());
/// assert!(favur_context_fuzz::target("nope").is_none());
/// ```
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The three renders of `history` pass the (non-strict) validators: whatever a history holds,
/// the library sends a well-formed request once there is a turn to send (a history of
/// pinned system prompts alone has no message for Anthropic: nothing to send yet).
///
/// ```
/// favur_context_fuzz::assert_renders_valid(&favur_context::History::new());
/// ```
pub fn assert_renders_valid(history: &History) {
    if history.view().is_empty() {
        return;
    }
    let openai = render_openai(history);
    if let Err(e) = validate_openai(&openai) {
        panic!("the OpenAI render is invalid: {e}\n{openai}");
    }
    let anthropic = render_anthropic(history).to_value();
    if let Err(e) = validate_anthropic(&anthropic) {
        panic!("the Anthropic render is invalid: {e}\n{anthropic}");
    }
    let gemini = render_gemini(history);
    if let Err(e) = validate_gemini(&gemini) {
        panic!("the Gemini render is invalid: {e}\n{gemini}");
    }
}

/// The journal reader: a history or a typed error; what loads renders valid requests.
///
/// ```
/// favur_context_fuzz::journal(b"{\"journal\":{\"format\":1,\"framing_tokens\":4}}\n{\"entry\":");
/// ```
pub fn journal(data: &[u8]) {
    for salvage in [false, true] {
        if let Ok((history, _)) = OpenOptions::new().salvage(salvage).read(data) {
            assert_renders_valid(&history);
        }
    }
}

fn import(format: Format, data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(transcript) = parse(format, text) else {
        return;
    };
    let mut history = History::new();
    if transcript
        .import_into(&mut history, seeds::every_role())
        .is_ok()
    {
        assert_renders_valid(&history);
        // A compaction of whatever was imported records and still renders valid.
        let policy = Policy::for_window(2_000).expect("a valid window");
        Compactor::new(policy)
            .compact(&mut history)
            .expect("the engine's own compaction applies");
        assert_renders_valid(&history);
    }
}

/// OpenAI Chat Completions transcripts.
///
/// ```
/// favur_context_fuzz::openai(br#"[{"role":"user","content":"hi"}]"#);
/// ```
pub fn openai(data: &[u8]) {
    import(Format::OpenAi, data);
}

/// Anthropic Messages transcripts.
///
/// ```
/// favur_context_fuzz::anthropic(br#"{"messages":[{"role":"user","content":"hi"}]}"#);
/// ```
pub fn anthropic(data: &[u8]) {
    import(Format::Anthropic, data);
}

/// mini-swe-agent trajectories.
///
/// ```
/// favur_context_fuzz::mini_swe(br#"{"messages":[{"role":"user","content":"hi"}]}"#);
/// ```
pub fn mini_swe(data: &[u8]) {
    import(Format::MiniSweAgent, data);
}

/// Gemini `contents`.
///
/// ```
/// favur_context_fuzz::gemini(br#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#);
/// ```
pub fn gemini(data: &[u8]) {
    import(Format::Gemini, data);
}

/// A request validator.
type Validator =
    fn(&serde_json::Value) -> Result<(), favur_context::render::validate::ValidationError>;

/// MCP `CallToolResult`s: a tool result message or a typed error; a message answers its
/// call in requests that pass the strict validators of every format.
///
/// ```
/// favur_context_fuzz::mcp(br#"{"content":[{"type":"text","text":"ok"}],"isError":true}"#);
/// ```
pub fn mcp(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let Ok(message) = favur_context::import::mcp::tool_result("call_1", &value) else {
        return;
    };
    let mut history = History::new();
    let call = favur_context::ToolCall::new("call_1", "tool", serde_json::json!({}));
    history.append(favur_context::fuzzy!(user: "go"));
    history.append(
        favur_context::Message::assistant_calls([call]).classify(favur_context::Retention::Fuzzy),
    );
    history.append(message.classify(favur_context::Retention::Fuzzy));
    let strict: [(&str, serde_json::Value, Validator); 3] = [
        (
            "OpenAI",
            render_openai(&history),
            favur_context::render::validate::validate_openai_strict,
        ),
        (
            "Anthropic",
            render_anthropic(&history).to_value(),
            favur_context::render::validate::validate_anthropic_strict,
        ),
        (
            "Gemini",
            render_gemini(&history),
            favur_context::render::validate::validate_gemini_strict,
        ),
    ];
    for (format, request, check) in strict {
        if let Err(e) = check(&request) {
            panic!("the {format} render of an MCP result is invalid: {e}\n{request}");
        }
    }
}

/// OpenAI Responses transcripts (items with reasoning, media and calls).
///
/// ```
/// favur_context_fuzz::responses(br#"[{"role":"user","content":"hi"}]"#);
/// ```
pub fn responses(data: &[u8]) {
    import(Format::Responses, data);
}

/// Policy files: a policy or a typed error; a policy that loads compacts a history.
///
/// ```
/// favur_context_fuzz::policy(b"window_tokens = 1000");
/// ```
pub fn policy(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(policy) = Policy::from_toml_str(text) {
        let mut history = seeds::sample_history();
        let tiers = policy.tiers().len() as u8;
        let mut compactor = Compactor::new(policy);
        compactor
            .compact(&mut history)
            .expect("the engine's own compaction applies");
        for tier in (1..=tiers).filter_map(std::num::NonZeroU8::new) {
            compactor
                .compact_at(&mut history, tier)
                .expect("the engine's own compaction applies");
        }
        assert_renders_valid(&history);
    }
}

/// Rules files: rules or a typed error; rules that load classify a transcript.
///
/// ```
/// favur_context_fuzz::rules(b"[[rule]]\nname = \"all\"\nclass = \"fuzzy\"\n");
/// ```
pub fn rules(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    command_keys(text);
    if let Ok(rules) = Rules::from_toml(text) {
        let transcript = parse(Format::OpenAi, seeds::SAMPLE_OPENAI).expect("the sample parses");
        let mut history = History::new();
        if transcript.import_into(&mut history, &rules).is_ok() {
            assert_renders_valid(&history);
        }
    }
}

/// The supersession key and the part of a file a rule with `key = "path"` reads off
/// `command`: a verdict, never a panic, and a line range never reversed.
fn command_keys(command: &str) {
    use favur_context::import::rules::{MessageFacts, RuleRef};
    use favur_context::message::KeyPart;
    let rules =
        Rules::from_toml("[[rule]]\nname = \"views\"\nkey = \"path\"\nclass = \"strict\"\n")
            .expect("the rule parses");
    let facts = MessageFacts::new(0, favur_context::Role::Tool).with_command(command);
    let _ = rules.key_for(RuleRef::Rule(0), &facts);
    if let Some(KeyPart::Lines(a, b)) = rules.key_part_for(RuleRef::Rule(0), &facts) {
        assert!(1 <= a && a <= b, "lines {a}-{b} of {command:?}");
    }
}

/// The request validators, on any JSON: a verdict, never a panic.
///
/// ```
/// favur_context_fuzz::validate(br#"{"messages":[{"role":"user","content":""}]}"#);
/// ```
pub fn validate(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let _ = favur_context::render::validate::validate_openai(&value);
    let _ = favur_context::render::validate::validate_openai_strict(&value);
    let _ = favur_context::render::validate::validate_anthropic(&value);
    let _ = favur_context::render::validate::validate_anthropic_strict(&value);
    let _ = favur_context::render::validate::validate_gemini(&value);
    let _ = favur_context::render::validate::validate_gemini_strict(&value);
    let _ = favur_context::render::validate::validate_responses_strict(&value);
}
