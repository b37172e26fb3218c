//! What an entry costs as it is sent: its tokens, counted block by block as the request
//! counter counts them, and the content blocks it is sent as (each costs the history's
//! framing tokens).

use super::form::Form;
use super::shown::{as_sent, is_directive_kind, shown, system_text};
use super::texts::{FIRST_TURN_NOTE, summary_block};
use crate::model::entry::{Entry, EntryId, EntryKind};
use crate::model::message::{Message, Part, Role};
use crate::tokens::counter::TokenCounter;

/// The role a block of `message` is sent with: results as tool results, text of a tool
/// entry as user text, everything else as its message.
fn block_role(message_role: Role, part: &Part) -> Role {
    match (part, message_role) {
        (Part::ToolResult(_), _) => Role::Tool,
        (_, Role::Tool) => Role::User,
        (_, r) => r,
    }
}

/// Tokens and content blocks of a message as sent (see [`shown`]): each block (a text, a
/// tool call, a tool result) is counted on its own, as the request counter
/// [`request_tokens`](crate::request::render::request_tokens) counts it.
pub(crate) fn count(counter: &dyn TokenCounter, message: &Message) -> (u32, u32) {
    if let [only] = message.parts.as_slice()
        && block_role(message.role, only) == message.role
    {
        if is_blank(only) {
            return (0, 0);
        }
        return (counter.count_message(message), 1);
    }
    let mut blocks = 0u32;
    let tokens = message
        .parts
        .iter()
        .filter(|p| !is_blank(p))
        .fold(0u32, |acc, p| {
            blocks += 1;
            acc.saturating_add(count_block(counter, block_role(message.role, p), p.clone()))
        });
    (tokens, blocks)
}

/// A blank text: sent as it is in OpenAI, left out by Anthropic, counted in neither.
pub(crate) fn is_blank(part: &Part) -> bool {
    matches!(part, Part::Text(t) if t.trim().is_empty())
}

/// The id with the most digits: estimates of text that will name an id not yet known
/// count it with this one, so that they are never short. Not a marker: no text carries
/// it as a stand-in.
pub(crate) const WIDEST_ID: EntryId = EntryId(u64::MAX);

/// What a summary block costs beyond its text: (with no id range, per range), counted
/// with the widest ids, so that an estimate made from it is never short. A history counts
/// it once (`History::summary_frame`).
pub(crate) fn summary_frame_cost(counter: &dyn TokenCounter) -> (u64, u64) {
    let widest = WIDEST_ID;
    let count = |ids: &[EntryId]| {
        u64::from(count_block(
            counter,
            Role::User,
            Part::Text(summary_block(widest, ids, "")),
        ))
    };
    let none = count(&[]);
    let one = count(&[EntryId(WIDEST_ID.0 - 1), widest]);
    // One token more per range for rounding: counts of joined texts are not additive.
    (none, one.saturating_sub(none) + 1)
}

/// Tokens of one block sent with `role`.
pub(crate) fn count_block(counter: &dyn TokenCounter, role: Role, part: Part) -> u32 {
    counter.count_message(&Message::new(role, vec![part]))
}

/// Tokens and blocks `entry` costs in `form`.
pub(crate) fn cost(counter: &dyn TokenCounter, entry: &Entry, form: &Form) -> (u32, u32) {
    count(counter, &shown(entry, form))
}

/// Tokens and blocks of a pinned system entry: its text as one system block (none if
/// blank).
pub(crate) fn system_pin_cost(counter: &dyn TokenCounter, message: &Message) -> (u32, u32) {
    let text = system_text(message);
    if text.trim().is_empty() {
        return (0, 0);
    }
    (count_block(counter, Role::System, Part::Text(text)), 1)
}

/// The text of the user turn put first in a request whose first message would be an
/// assistant turn.
pub(crate) fn first_turn_cost(counter: &dyn TokenCounter) -> u32 {
    count_block(counter, Role::User, Part::Text(FIRST_TURN_NOTE.to_owned()))
}

/// Content blocks `entry` is sent as in `form` (what [`count`] of [`shown`] gives),
/// computed without building the message.
pub(crate) fn blocks(entry: &Entry, form: &Form) -> u32 {
    let m = &entry.message;
    let n = |k: usize| u32::try_from(k).unwrap_or(u32::MAX);
    if entry.kind == EntryKind::Pinned && m.role == Role::System {
        return u32::from(!system_text(m).trim().is_empty());
    }
    if entry.kind.is_summary() {
        return 1;
    }
    if m.parts.iter().any(crate::model::part_check::is_new_kind) {
        return n(shown(entry, form)
            .parts
            .iter()
            .filter(|p| !is_blank(p))
            .count());
    }
    let calls = m.tool_calls().count();
    match form {
        Form::Capped(c) => n(as_sent(c).parts.iter().filter(|p| !is_blank(p)).count()),
        Form::CallsOnly if is_directive_kind(m) || m.role == Role::System => n(1 + calls),
        Form::CallsOnly => n(calls),
        Form::Placeholder { .. } => n(m.tool_results().count().max(1)),
        Form::Command => 1,
        Form::Verbatim if is_directive_kind(m) || m.role == Role::System => n(1 + calls),
        Form::Verbatim => n(m.parts.iter().filter(|p| !is_blank(p)).count()),
    }
}

impl Form {
    /// What an entry costs in this form with `counter`: its tokens as sent and the
    /// number of content blocks (texts, tool calls, tool results) it is sent as; usage
    /// adds the history's framing tokens for each block.
    ///
    /// ```
    /// use favur_context::render::Form;
    /// use favur_context::{strict, History};
    /// let mut h = History::new();
    /// let id = h.append(strict!(tool_call: "c1", "bash", serde_json::json!({"command": "ls"})));
    /// let e = h.recall(id).unwrap();
    /// assert_eq!(Form::Verbatim.cost(&e, h.counter()), (e.tokens(), 1));
    /// ```
    pub fn cost(&self, entry: &Entry, counter: &dyn TokenCounter) -> (u32, u32) {
        cost(counter, entry, self)
    }
}
