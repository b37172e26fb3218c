//! Rendering the current view into provider requests: OpenAI Chat Completions `messages`
//! and Anthropic Messages (`system` + `messages`).
//!
//! Both renderers share one pass that turns the view into a provider-neutral sequence and
//! repairs the tool-call pairing, so the two formats give the same guarantees:
//!
//! - what each entry sends in its form has one owner ([`Form::message_for`](crate::Form::message_for)),
//!   which the history and the planner count with: usage is the count of what is sent
//!   ([`request_tokens`]);
//! - pinned system entries come first (system messages / the Anthropic `system`
//!   parameter); pins of other roles are rendered where they were recorded, verbatim;
//! - every tool call is followed by exactly one result, placed directly after the
//!   assistant message that made the call; a result that was compacted or is missing
//!   becomes a short placeholder ([`placeholder_text`], [`missing_result`]); the only
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
//! use favur_context::validate::{validate_anthropic, validate_openai};
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

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::history::History;
use crate::model::entry::{Entry, EntryId};
use crate::model::message::{Arguments, Message, Part, Role, ToolCall};
use crate::request::forms;
use crate::request::forms::placeholder_text;

/// The text of the user turn inserted at the start of an Anthropic request whose first
/// rendered message would otherwise be an assistant turn (the API requires a user turn
/// first).
///
/// ```
/// assert!(favur_context::render::FIRST_TURN_NOTE.starts_with("<context-note>"));
/// ```
pub const FIRST_TURN_NOTE: &str =
    "<context-note>The conversation continues from earlier context.</context-note>";

mod count;
pub use count::request_tokens;

pub use crate::request::forms::{
    QUOTED_DIRECTIVE, SUMMARY_PREAMBLE, TAG_NAMES, call_as_text, directive_block, missing_result,
    neutralize, neutralize_quoted, orphan_result, summary_block, system_note,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// One rendered call, with the id it has in the request.
#[derive(Debug, Clone)]
struct OutCall<'h> {
    id: String,
    call: Cow<'h, ToolCall>,
}

/// A provider-neutral rendered message.
#[derive(Debug, Clone)]
enum Out<'h> {
    /// Text (and, for the assistant, calls) of one role.
    Msg {
        role: Role,
        texts: Vec<Cow<'h, str>>,
        calls: Vec<OutCall<'h>>,
        ext: &'h Map<String, Value>,
    },
    /// A tool result answering the call with `id`.
    Res {
        id: String,
        content: Cow<'h, str>,
        is_error: bool,
        ext: &'h Map<String, Value>,
    },
}

/// Items after forms are applied, before pairing.
#[derive(Debug)]
enum Item<'h> {
    Msg {
        role: Role,
        texts: Vec<Cow<'h, str>>,
        calls: Vec<Cow<'h, ToolCall>>,
        ext: &'h Map<String, Value>,
        entry: EntryId,
    },
    Res {
        call_id: Cow<'h, str>,
        content: Cow<'h, str>,
        is_error: bool,
        ext: &'h Map<String, Value>,
        entry: EntryId,
    },
}

/// One part of a shown message, borrowed from the entry or owned by the form.
enum PartOf<'h> {
    Text(Cow<'h, str>),
    Call(Cow<'h, ToolCall>),
    Result(Cow<'h, str>, Cow<'h, str>, bool),
}

fn parts_of(message: Cow<'_, Message>) -> (Role, Vec<PartOf<'_>>) {
    match message {
        Cow::Borrowed(m) => (
            m.role,
            m.parts
                .iter()
                .map(|p| match p {
                    Part::Text(t) => PartOf::Text(Cow::Borrowed(t.as_str())),
                    Part::ToolCall(c) => PartOf::Call(Cow::Borrowed(c)),
                    Part::ToolResult(r) => PartOf::Result(
                        Cow::Borrowed(r.call_id.as_str()),
                        Cow::Borrowed(r.content.as_str()),
                        r.is_error,
                    ),
                })
                .collect(),
        ),
        Cow::Owned(m) => (
            m.role,
            m.parts
                .into_iter()
                .map(|p| match p {
                    Part::Text(t) => PartOf::Text(Cow::Owned(t)),
                    Part::ToolCall(c) => PartOf::Call(Cow::Owned(c)),
                    Part::ToolResult(r) => {
                        PartOf::Result(Cow::Owned(r.call_id), Cow::Owned(r.content), r.is_error)
                    }
                })
                .collect(),
        ),
    }
}

/// Splits the message an entry shows (see [`Form::message_for`](crate::Form::message_for), the one owner of what
/// each form sends) into items: one per result, and one for its texts and calls if any.
fn push_message<'h>(items: &mut Vec<Item<'h>>, message: Cow<'h, Message>, entry: &'h Entry) {
    let ext = &entry.message().extensions;
    let (role, parts) = parts_of(message);
    let mut texts: Vec<Cow<'h, str>> = Vec::new();
    let mut calls = Vec::new();
    for part in parts {
        match part {
            PartOf::Text(t) => texts.push(t),
            PartOf::Call(c) => calls.push(c),
            PartOf::Result(call_id, content, is_error) => items.push(Item::Res {
                call_id,
                content,
                is_error,
                ext,
                entry: entry.id(),
            }),
        }
    }
    let role = match role {
        Role::Tool => Role::User,
        r => r,
    };
    if !texts.is_empty() || !calls.is_empty() {
        items.push(Item::Msg {
            role,
            texts,
            calls,
            ext,
            entry: entry.id(),
        });
    }
}

/// The pinned system texts and the neutral rendered sequence with pairing repaired.
fn neutral(history: &History) -> (Vec<(&Entry, String)>, Vec<Out<'_>>) {
    let mut system = Vec::new();
    let mut items: Vec<Item<'_>> = Vec::new();
    for id in history.pinned() {
        let Some(entry) = history.entry(*id) else {
            continue;
        };
        // Pins of other roles are in the view, where they were recorded.
        if entry.message().role == Role::System {
            let text = entry.message().text();
            if !text.trim().is_empty() {
                system.push((entry, text));
            }
        }
    }
    for item in history.view().items() {
        let Some(entry) = history.entry(item.id) else {
            continue;
        };
        push_message(&mut items, item.form.message_for(entry), entry);
    }
    let mut out = pair(history, items);
    // The first message that sends something (blank texts are not sent by Anthropic).
    let first = out.iter().find(|o| match o {
        Out::Msg { texts, calls, .. } => {
            !calls.is_empty() || texts.iter().any(|t| !t.trim().is_empty())
        }
        Out::Res { .. } => true,
    });
    let note = match first {
        Some(Out::Msg { role, .. }) => *role == Role::Assistant,
        Some(Out::Res { .. }) => false,
        None => !history.view().is_empty(),
    };
    if note {
        // Anthropic requires a user turn first (and a request holds at least one
        // message); both formats send the same note, so that both send what usage counts.
        out.insert(
            0,
            Out::Msg {
                role: Role::User,
                texts: vec![Cow::Borrowed(FIRST_TURN_NOTE)],
                calls: Vec::new(),
                ext: empty_map(),
            },
        );
    }
    (system, out)
}

/// Where each call's result is, and the repaired sequence.
fn pair<'h>(history: &'h History, items: Vec<Item<'h>>) -> Vec<Out<'h>> {
    // 1. Assign each result to the most recent unanswered call with its id before it.
    let mut open: forms::Matcher<(usize, usize)> = forms::Matcher::default();
    let items = &items;
    let mut answer: HashMap<(usize, usize), usize> = HashMap::new();
    let mut answered_res: HashSet<usize> = HashSet::new();
    for (i, item) in items.iter().enumerate() {
        match item {
            Item::Msg { calls, .. } => {
                for (c, call) in calls.iter().enumerate() {
                    open.call(&call.id, i as u64, (i, c));
                }
            }
            Item::Res { call_id, .. } => {
                if let Some(call) = open.answer(call_id) {
                    answer.insert(call, i);
                    answered_res.insert(i);
                }
            }
        }
    }
    // The last item that renders as a message of its own (a message, or a result whose
    // call is not in the request): calls made there with no result are the in-flight tail.
    let last_msg = items
        .iter()
        .enumerate()
        .rev()
        .find(|(i, item)| matches!(item, Item::Msg { .. }) || !answered_res.contains(i))
        .map(|(i, _)| i);
    // Results anywhere in the history (`History::result_entries`, which also knows the
    // originals a journal evicted), by call id, for calls whose result left the view.

    // 2. Emit, pulling each call's result up to directly after its assistant message.
    let mut out = Vec::with_capacity(items.len());
    let mut emitted: HashSet<usize> = HashSet::new();
    for (i, item) in items.iter().enumerate() {
        match item {
            Item::Msg {
                role,
                texts,
                calls,
                ext,
                entry,
            } => {
                let mut seen = UniqueIds::default();
                let mut out_calls = Vec::with_capacity(calls.len());
                for call in calls {
                    // An empty id is sent as `call` (a request needs one).
                    let id = if call.id.is_empty() { "call" } else { &call.id };
                    out_calls.push(OutCall {
                        id: seen.unique(id),
                        call: call.clone(),
                    });
                }
                let results: Vec<Out<'h>> = out_calls
                    .iter()
                    .enumerate()
                    .filter_map(|(c, call)| {
                        if let Some(&r) = answer.get(&(i, c)) {
                            emitted.insert(r);
                            if let Item::Res {
                                content,
                                is_error,
                                ext,
                                ..
                            } = &items[r]
                            {
                                return Some(Out::Res {
                                    id: call.id.clone(),
                                    content: content.clone(),
                                    is_error: *is_error,
                                    ext,
                                });
                            }
                            return None;
                        }
                        let original = calls[c].id.as_str();
                        let later = history
                            .result_entries(original)
                            .iter()
                            .find(|r| **r > *entry)
                            .copied();
                        let content = match later {
                            Some(r) => Cow::Owned(placeholder_text(r, None)),
                            None if Some(i) == last_msg => return None, // in-flight tail
                            None => Cow::Borrowed(missing_result()),
                        };
                        Some(Out::Res {
                            id: call.id.clone(),
                            content,
                            is_error: false,
                            ext: empty_map(),
                        })
                    })
                    .collect();
                out.push(Out::Msg {
                    role: *role,
                    texts: texts.clone(),
                    calls: out_calls,
                    ext,
                });
                out.extend(results);
            }
            Item::Res {
                call_id,
                content,
                is_error,
                ext,
                entry,
            } => {
                if emitted.contains(&i) {
                    continue;
                }
                out.push(Out::Msg {
                    role: Role::User,
                    texts: vec![Cow::Owned(orphan_result(
                        *entry, call_id, content, *is_error,
                    ))],
                    calls: Vec::new(),
                    ext,
                });
            }
        }
    }
    out
}

fn empty_map() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

const OPENAI_OWNED: [&str; 4] = ["role", "content", "tool_calls", "tool_call_id"];

/// Extension keys starting with this are the library's own bookkeeping (e.g. the
/// engine's `favur_kind` on summaries) and are never rendered.
///
/// ```
/// use favur_context::{History, Message, Retention};
/// let mut h = History::new();
/// h.append(Message::user("hi").with_extension("favur_note", serde_json::json!(1)).classify(Retention::Strict));
/// assert_eq!(favur_context::render::render_openai(&h)[0], serde_json::json!({"role": "user", "content": "hi"}));
/// assert_eq!(favur_context::render::INTERNAL_EXTENSION_PREFIX, "favur_");
/// ```
pub const INTERNAL_EXTENSION_PREFIX: &str = "favur_";

fn add_extensions(obj: &mut Map<String, Value>, ext: &Map<String, Value>, owned: &[&str]) {
    for (k, v) in ext {
        if !owned.contains(&k.as_str()) && !k.starts_with(INTERNAL_EXTENSION_PREFIX) {
            obj.insert(k.clone(), v.clone());
        }
    }
}

fn openai_content(texts: &[Cow<'_, str>], null_if_empty: bool) -> Value {
    match texts {
        [] if null_if_empty => Value::Null,
        [] => Value::String(String::new()),
        [one] => Value::String(one.to_string()),
        many => Value::Array(
            many.iter()
                .map(|t| json!({"type": "text", "text": t.as_ref()}))
                .collect(),
        ),
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
    let (system, seq) = neutral(history);
    let mut messages = Vec::with_capacity(system.len() + seq.len());
    for (entry, text) in system {
        let mut m = Map::new();
        m.insert("role".into(), json!("system"));
        m.insert("content".into(), Value::String(text));
        add_extensions(&mut m, &entry.message().extensions, &OPENAI_OWNED);
        messages.push(Value::Object(m));
    }
    for out in seq {
        let mut m = Map::new();
        match out {
            Out::Msg {
                role,
                texts,
                calls,
                ext,
            } => {
                m.insert("role".into(), json!(role.as_str()));
                m.insert(
                    "content".into(),
                    openai_content(&texts, role == Role::Assistant && !calls.is_empty()),
                );
                if !calls.is_empty() {
                    let calls: Vec<Value> = calls
                        .iter()
                        .map(|c| {
                            json!({
                                "id": c.id,
                                "type": "function",
                                "function": {"name": tool_name(&c.call.name), "arguments": c.call.arguments.to_json_string()},
                            })
                        })
                        .collect();
                    m.insert("tool_calls".into(), Value::Array(calls));
                }
                add_extensions(&mut m, ext, &OPENAI_OWNED);
            }
            Out::Res {
                id, content, ext, ..
            } => {
                m.insert("role".into(), json!("tool"));
                m.insert("tool_call_id".into(), Value::String(id));
                m.insert("content".into(), Value::String(content.into_owned()));
                add_extensions(&mut m, ext, &OPENAI_OWNED);
            }
        }
        messages.push(Value::Object(m));
    }
    Value::Array(messages)
}

/// The id as Anthropic accepts it (`^[a-zA-Z0-9_-]+$`).
/// Ids made unique: the first use of an id is itself, later ones `id_2`, `id_3`, ...
/// (skipping any taken). Each base remembers its next suffix, so `n` uses of one id cost
/// O(n), not O(n^2).
#[derive(Default)]
struct UniqueIds {
    used: HashSet<String>,
    next: HashMap<String, u64>,
}

impl UniqueIds {
    fn unique(&mut self, base: &str) -> String {
        if self.used.insert(base.to_owned()) {
            return base.to_owned();
        }
        let k = self.next.entry(base.to_owned()).or_insert(2);
        loop {
            let id = format!("{base}_{k}");
            *k += 1;
            if self.used.insert(id.clone()) {
                return id;
            }
        }
    }
}

/// The name a call is sent with: a request needs one, so an empty name (which every
/// fallible way in refuses) is sent as `tool`.
fn tool_name(name: &str) -> &str {
    if name.is_empty() { "tool" } else { name }
}

fn anthropic_id(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() { "call".to_owned() } else { s }
}

fn anthropic_input(arguments: &Arguments) -> Value {
    match arguments {
        Arguments::Json(v @ Value::Object(_)) => v.clone(),
        Arguments::Json(v) => json!({ "arguments": v }),
        Arguments::Invalid(raw) => json!({ "arguments": raw }),
    }
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
    let (pinned, seq) = neutral(history);
    let mut system = Vec::new();
    for (entry, text) in pinned {
        let mut block = Map::new();
        block.insert("type".into(), json!("text"));
        block.insert("text".into(), Value::String(text));
        if let Some(cc) = entry.message().extensions.get("cache_control") {
            block.insert("cache_control".into(), cc.clone());
        }
        system.push(Value::Object(block));
    }

    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut used_ids = UniqueIds::default();
    let mut current: HashMap<String, String> = HashMap::new();
    for out in seq {
        let (role, mut blocks, ext) = match out {
            Out::Msg {
                role,
                texts,
                calls,
                ext,
            } => {
                let mut blocks = Vec::new();
                for t in texts {
                    if !t.trim().is_empty() {
                        blocks.push(json!({"type": "text", "text": t.into_owned()}));
                    }
                }
                if role == Role::Assistant {
                    current.clear();
                }
                for c in calls {
                    let id = used_ids.unique(&anthropic_id(&c.id));
                    current.insert(c.id.clone(), id.clone());
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": id,
                        "name": tool_name(&c.call.name),
                        "input": anthropic_input(&c.call.arguments),
                    }));
                }
                let role = if role == Role::Assistant {
                    "assistant"
                } else {
                    "user"
                };
                (role, blocks, ext)
            }
            Out::Res {
                id,
                content,
                is_error,
                ext,
            } => {
                let id = current
                    .get(&id)
                    .cloned()
                    .unwrap_or_else(|| anthropic_id(&id));
                let mut block = Map::new();
                block.insert("type".into(), json!("tool_result"));
                block.insert("tool_use_id".into(), Value::String(id));
                if !content.is_empty() {
                    block.insert("content".into(), Value::String(content.into_owned()));
                }
                if is_error {
                    block.insert("is_error".into(), Value::Bool(true));
                }
                ("user", vec![Value::Object(block)], ext)
            }
        };
        if blocks.is_empty() {
            continue;
        }
        if let (Some(cc), Some(Value::Object(last))) = (ext.get("cache_control"), blocks.last_mut())
        {
            last.insert("cache_control".into(), cc.clone());
        }
        match turns.last_mut() {
            Some((r, existing)) if *r == role => existing.append(&mut blocks),
            _ => turns.push((role, blocks)),
        }
    }
    if turns.first().is_some_and(|(r, _)| *r == "assistant") {
        turns.insert(
            0,
            (
                "user",
                vec![json!({"type": "text", "text": FIRST_TURN_NOTE})],
            ),
        );
    }
    let messages = turns
        .into_iter()
        .map(|(role, blocks)| json!({"role": role, "content": blocks}))
        .collect();
    AnthropicRequest { system, messages }
}
