//! Rendering the current view into provider requests: OpenAI Chat Completions `messages`,
//! Anthropic Messages (`system` + `messages`) and Gemini `generateContent`
//! ([`render_gemini`]: `systemInstruction` + `contents`).
//!
//! Both renderers share one pass that turns the view into a provider-neutral sequence and
//! repairs the tool-call pairing, so the two formats give the same guarantees:
//!
//! - what each entry sends in its form has one owner ([`Form::message_for`](crate::render::Form::message_for)),
//!   which the history and the planner count with: usage is the count of what is sent
//!   ([`request_tokens`]);
//! - pinned system entries come first (system messages / the Anthropic `system`
//!   parameter); pins of other roles are rendered where they were recorded, verbatim;
//! - every tool call is followed by exactly one result, placed directly after the
//!   assistant message that made the call; a result that was compacted or is missing
//!   becomes a short placeholder ([`placeholder_text`](crate::render::placeholder_text), [`missing_result`]); the only
//!   exception is an *in-flight tail*: calls of the last assistant message with nothing
//!   but results after it, whose results have not been recorded anywhere yet. Those are
//!   rendered as they are (the caller is about to run the tools); the validators accept
//!   them unless asked to be strict;
//! - a result whose call is not in the request is rendered as marked context in a user
//!   message ([`orphan_result`]), never as a tool message;
//! - summaries are rendered as a tagged block in a user-role message ([`summary_block`]):
//!   clearly marked context naming the ids they replace, not a directive;
//! - text from tools and models is data: it is [`neutralize`]d everywhere (it cannot open
//!   or close one of the library's blocks nor pose as a directive) and
//!   [`neutralize_quoted`] inside wrappers (no line of it poses as a turn);
//! - the output is a pure function of the history's entries and view: an unchanged view
//!   renders to byte-identical JSON (keys are emitted in a fixed order).
//!
//! See `docs/render.md` for the full list of choices.
//!
//! ```
//! use favur_context::{fuzzy, strict, History};
//! use favur_context::render::{render_anthropic, render_openai};
//! use favur_context::render::validate::{validate_anthropic, validate_openai};
//!
//! let mut h = History::new();
//! h.pin(strict!(system: "You are a coding agent."));
//! h.append(strict!(user: "List the files."));
//! h.append(fuzzy!(tool_call: "c1", "bash", serde_json::json!({"command": "ls"})));
//! h.append(fuzzy!(tool_result("c1"): "Cargo.toml\nsrc"));
//! let openai = render_openai(&h);
//! assert_eq!(openai[0]["role"], "system");
//! assert_eq!(openai[3]["tool_call_id"], "c1");
//! validate_openai(&openai).unwrap();
//! let anthropic = render_anthropic(&h).to_value();
//! assert_eq!(anthropic["system"][0]["text"], "You are a coding agent.");
//! validate_anthropic(&anthropic).unwrap();
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::history::History;

pub use crate::model::extensions::{INTERNAL_EXTENSION_PREFIX, ITEM_IDS_EXTENSION};
pub use crate::sent::FIRST_TURN_NOTE;

mod anthropic;
mod anthropic_blocks;
mod breakpoints;
mod bytes;
mod cache;
mod count;
mod count_parts;
mod gemini;
mod neutral;
mod openai;
mod responses;
mod summaries;
pub use breakpoints::{BlockAt, CachePlacement, render_anthropic_cached};
pub use cache::Renderer;
pub use count::request_tokens;
pub use gemini::{GeminiOptions, PLACEHOLDER_THOUGHT_SIGNATURE, render_gemini, render_gemini_with};

pub use crate::request::validate;
pub use crate::sent::{
    Form, LINE_BREAKS, QUOTED_DIRECTIVE, SUMMARY_PREAMBLE, TAG_NAMES, call_as_text,
    directive_block, missing_result, neutralize, neutralize_quoted, orphan_result,
    placeholder_text, summary_block, system_note,
};

/// An Anthropic Messages request body without the model parameters: the `system` text
/// blocks (from the pinned system entries) and the `messages`.
///
/// ```
/// use favur_context::{strict, History};
/// let mut h = History::new();
/// h.pin(strict!(system: "Be brief."));
/// h.append(strict!(user: "hi"));
/// let req = favur_context::render::render_anthropic(&h);
/// assert_eq!(req.system.len(), 1);
/// assert_eq!(req.messages[0]["role"], "user");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AnthropicRequest {
    /// The `system` parameter as text blocks; empty when nothing is pinned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub system: Vec<Value>,
    /// The `messages`, alternating and starting with a user turn.
    pub messages: Vec<Value>,
}

impl AnthropicRequest {
    /// The request as JSON: `{"system": [...], "messages": [...]}`, `system` omitted when
    /// empty. Merge it with `model`, `max_tokens` and `tools` to send it.
    ///
    /// ```
    /// use favur_context::{strict, History};
    /// let mut h = History::new();
    /// h.append(strict!(user: "hi"));
    /// let v = favur_context::render::render_anthropic(&h).to_value();
    /// assert!(v.get("system").is_none());
    /// assert_eq!(v["messages"][0]["content"][0]["text"], "hi");
    /// ```
    pub fn to_value(&self) -> Value {
        let mut out = Map::new();
        if !self.system.is_empty() {
            out.insert("system".into(), Value::Array(self.system.clone()));
        }
        out.insert("messages".into(), Value::Array(self.messages.clone()));
        Value::Object(out)
    }
}

fn add_extensions(obj: &mut Map<String, Value>, ext: &Map<String, Value>, owned: &[&str]) {
    for (k, v) in ext {
        if !owned.contains(&k.as_str()) && !k.starts_with(INTERNAL_EXTENSION_PREFIX) {
            obj.insert(k.clone(), v.clone());
        }
    }
}

/// Renders the view as OpenAI Chat Completions `messages` (a JSON array).
///
/// Pinned system entries become `system` messages, then the view in order: `user`,
/// `assistant` (with `tool_calls`; `content` is `null` when there is no text), and one
/// `tool` message per result, directly after the assistant message that made the call.
/// Extensions are copied as top-level fields of the message (never over `role`,
/// `content`, `tool_calls`, `tool_call_id`). Tool-call arguments are serialized JSON (or
/// the raw text for arguments that were not valid JSON).
///
/// ```
/// use favur_context::{fuzzy, History, Message, Retention};
/// let mut h = History::new();
/// h.append(Message::user("hi").with_extension("name", serde_json::json!("ana")).classify(Retention::Strict));
/// h.append(fuzzy!(assistant: "hello"));
/// let messages = favur_context::render::render_openai(&h);
/// assert_eq!(messages, serde_json::json!([
///     {"role": "user", "content": "hi", "name": "ana"},
///     {"role": "assistant", "content": "hello"},
/// ]));
/// ```
pub fn render_openai(history: &History) -> Value {
    let (system, seq) = neutral::neutral(history);
    let mut messages = Vec::with_capacity(system.len() + seq.len());
    messages.extend(
        system
            .into_iter()
            .map(|(entry, text)| openai::system_message(entry, text)),
    );
    messages.extend(seq.into_iter().map(openai::message));
    Value::Array(messages)
}

/// Renders the view as an Anthropic Messages request.
///
/// Pinned system entries become the `system` text blocks. Messages use content blocks
/// (`text`, `tool_use`, `tool_result`); consecutive turns of the same role are merged,
/// tool results go first in the user turn after the assistant turn that made the calls,
/// and if the first turn would be an assistant turn a user turn with
/// [`FIRST_TURN_NOTE`] is inserted before it. Empty or whitespace-only text blocks are
/// left out (the API rejects them). Tool ids are rewritten to the characters the API
/// accepts and made unique across the request. Non-object arguments are wrapped as
/// `{"arguments": ...}`. If the view holds only empty messages, the request holds the
/// note turn alone; an empty view renders to no messages (which providers reject). The
/// only extension with a place in this format is
/// `cache_control`, set on the last block rendered from the entry; system-role entries
/// in the view (not pinned) become user text in a `<system-note>` block.
///
/// ```
/// use favur_context::{fuzzy, History};
/// let mut h = History::new();
/// h.append(fuzzy!(assistant: "I was asked to look around."));
/// let req = favur_context::render::render_anthropic(&h);
/// assert_eq!(req.messages[0]["content"][0]["text"], favur_context::render::FIRST_TURN_NOTE);
/// assert_eq!(req.messages[1]["role"], "assistant");
/// ```
pub fn render_anthropic(history: &History) -> AnthropicRequest {
    let (pinned, seq) = neutral::neutral(history);
    let system = pinned
        .into_iter()
        .map(|(entry, text)| anthropic::system_block(entry, text))
        .collect();
    let mut turns = anthropic::Turns::default();
    for out in seq {
        turns.push(out);
    }
    turns.finish();
    AnthropicRequest {
        system,
        messages: turns.messages,
    }
}

/// Renders the view as an OpenAI Responses request body: `{"input": [...]}` (merge it
/// with `model`, `tools`, `store` and, with `store: false`,
/// `include: ["reasoning.encrypted_content"]`).
///
/// Pinned system entries are `system` message items first; user messages are `message`
/// items (`input_text`, `input_image`, `input_file`); an assistant message is its
/// `reasoning` items (OpenAI reasoning only), `message` items (an easy input message
/// per text, or with the API's item id the output message it was) and
/// `function_call` items in its own order, each call followed by its
/// `function_call_output`. Call ids are unique across the request. See
/// `docs/formats.md` for every rule.
///
/// ```
/// use favur_context::message::{Part, Reasoning};
/// use favur_context::{History, Message, Retention, Role, ToolCall};
/// let mut h = History::new();
/// h.append(Message::user("list the files").classify(Retention::Strict));
/// h.append(Message::new(Role::Assistant, vec![
///     Part::from(Reasoning::openai("rs_1", ["listing"], Some("ENC".into()))),
///     Part::from(ToolCall::new("call_1", "ls", "{}").with_provider_id("fc_1")),
/// ]).classify(Retention::Fuzzy));
/// h.append(Message::tool_result("call_1", "a.rs", false).classify(Retention::Fuzzy));
/// let body = favur_context::render::render_responses(&h);
/// let types: Vec<&str> = body["input"].as_array().unwrap().iter().map(|i| i["type"].as_str().unwrap()).collect();
/// assert_eq!(types, ["message", "reasoning", "function_call", "function_call_output"]);
/// assert_eq!(body["input"][2]["id"], "fc_1");
/// favur_context::render::validate::validate_responses_strict(&body).unwrap();
/// ```
pub fn render_responses(history: &History) -> Value {
    let (system, seq) = neutral::neutral(history);
    let mut items = responses::Items::default();
    items.input.extend(
        system
            .into_iter()
            .map(|(entry, text)| responses::system_message(entry, text)),
    );
    for out in seq {
        items.push(out);
    }
    responses::body(items.input)
}
