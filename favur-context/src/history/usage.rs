//! Usage: what the next request sends, counted by the rule `render::request_tokens`
//! counts a rendered request with.

use super::History;
use crate::history::view::View;
use crate::model::entry::{Entry, EntryId, EntryKind};
use crate::model::message::{Part, Role};
use crate::sent::{self, Form};
use crate::tokens::counter::TokenCounter;

impl History {
    /// Tokens the pinned system entries send, framing included: the start of every
    /// request, which no compaction changes.
    pub(crate) fn system_tokens(&self) -> u64 {
        self.pinned_tokens + self.pinned_blocks * u64::from(self.framing)
    }

    /// The usage this history would have with `view` as its view: the tokens of every
    /// pinned entry and view item as sent, the framing of each content block, and the
    /// note turn put first when the request would start with an assistant turn.
    pub(crate) fn usage_with(&self, view: &View, repairs: &sent::Repairs) -> u64 {
        let framing = u64::from(self.framing);
        let (repair_tokens, repair_blocks) = repairs.added();
        let blocks = self.pinned_blocks + view.blocks() + repair_blocks;
        let note = if starts_with_assistant(view) {
            u64::from(sent::first_turn_cost(self.counter.as_ref())) + framing
        } else {
            0
        };
        self.pinned_tokens + view.tokens() + repair_tokens + blocks * framing + note
    }

    /// The usage this history would have with `view` (a derived view) as its view.
    pub(crate) fn usage_after(&self, view: &View) -> u64 {
        self.usage_with(view, &self.repairs_of(view))
    }

    /// The repairs rendering makes to `view`, computed afresh.
    pub(super) fn repairs_of(&self, view: &View) -> sent::Repairs {
        let mut repairs = sent::Repairs::default();
        for item in view.items() {
            if let Some(e) = self.entry(item.id) {
                self.feed(&mut repairs, e, &item.form);
            }
        }
        repairs
    }

    pub(super) fn feed(&self, repairs: &mut sent::Repairs, entry: &Entry, form: &Form) {
        // Pairing reads only the parts' kinds and ids (and an orphan's content, which its
        // wrapper neutralises): a verbatim entry is read as recorded, unconverted.
        let message = match form {
            Form::Verbatim => std::borrow::Cow::Borrowed(&entry.message),
            _ => sent::shown(entry, form),
        };
        if message.parts.iter().all(|p| matches!(p, Part::Text(_))) {
            repairs.feed(self.counter.as_ref(), entry, &message, None);
            return;
        }
        let later = |call_id: &str, made: EntryId| {
            self.result_entries(call_id)
                .iter()
                .find(|r| **r > made)
                .copied()
        };
        repairs.feed(self.counter.as_ref(), entry, &message, Some(&later));
    }

    /// Tokens and blocks `entry` costs as recorded (pinned system entries as system
    /// blocks, everything else as sent verbatim).
    pub(crate) fn cost(&self, entry: &Entry) -> (u32, u32) {
        recorded_cost(self.counter.as_ref(), entry)
    }
}

/// Tokens and blocks `entry` costs as recorded with `counter`: what every entry (and
/// summary) recorded, read back or recalled carries as its count.
/// The most framing tokens per content block a record may declare. Providers frame a
/// block with a handful of tokens; a header or session row declaring more is damaged
/// or forged (a `u32::MAX` would make every request refuse on the limit).
pub(crate) const MAX_FRAMING_TOKENS: u32 = 256;

/// `framing` if it is within [`MAX_FRAMING_TOKENS`], else what is wrong with it.
pub(crate) fn checked_framing(framing: i64) -> Result<u32, String> {
    u32::try_from(framing)
        .ok()
        .filter(|f| *f <= MAX_FRAMING_TOKENS)
        .ok_or_else(|| format!("framing_tokens {framing} is not within 0..={MAX_FRAMING_TOKENS}"))
}

pub(crate) fn recorded_cost(counter: &dyn TokenCounter, entry: &Entry) -> (u32, u32) {
    if entry.kind == EntryKind::Pinned && entry.message.role == Role::System {
        sent::system_pin_cost(counter, &entry.message)
    } else {
        sent::cost(counter, entry, &Form::Verbatim)
    }
}

/// [`recorded_cost`], and whether `entry` is sent as it is recorded when shown verbatim
/// (the view item's `sent_as_is`), from one scan of its text: what an append computes.
pub(crate) fn recorded_cost_and_sent(
    counter: &dyn TokenCounter,
    entry: &Entry,
) -> ((u32, u32), bool) {
    if entry.kind == EntryKind::Pinned && entry.message.role == Role::System {
        // A system message is always rewritten when sent (see `sent::sent`).
        return (sent::system_pin_cost(counter, &entry.message), false);
    }
    let shown = sent::shown(entry, &Form::Verbatim);
    let sent_as_is = !entry.kind.is_summary() && matches!(shown, std::borrow::Cow::Borrowed(_));
    (sent::count(counter, &shown), sent_as_is)
}

/// Whether the renderers put the note turn first: when the first message `view` sends is
/// an assistant turn (Anthropic requires a user turn first), or when it sends nothing at
/// all although it holds items (so the request stays well-formed).
fn starts_with_assistant(view: &View) -> bool {
    match view.items().iter().find(|i| i.blocks > 0) {
        Some(i) => i.shape.role == Role::Assistant && !i.shape.summary,
        None => !view.is_empty(),
    }
}
