//! The view turned into a provider-neutral sequence: what each item sends (through
//! [`Form::message_for`](crate::render::Form::message_for)), the tool-call pairing repaired, and
//! the first turn note, shared by both renderers.

use std::borrow::Cow;

use foldhash::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::FIRST_TURN_NOTE;
use super::summaries::SummaryBlocks;
use crate::history::History;
use crate::history::view::ViewItem;
use crate::model::entry::{Entry, EntryId};
use crate::model::message::{Message, Part, Role, ToolCall};
use crate::model::parts::{Media, Reasoning};
use crate::sent;
use crate::sent::Form;
use crate::sent::{missing_result, orphan_result, placeholder_text};

mod json;
mod segments;
pub(super) use json::{SPARE, SPARE_TEXT, empty_map, filled, filled_map, object, refill};
pub(super) use segments::{Segment, segments};

/// Ids made unique: the first use of an id is itself, later ones `id_2`, `id_3`, ...
/// (skipping any taken). Each base remembers its next suffix, so `n` uses of one id cost
/// O(n), not O(n^2); what was taken since a [`mark`](UniqueIds::mark) can be given back,
/// suffixes included, so a renderer that resumes gives the ids a render from scratch
/// gives.
#[derive(Debug, Default, Clone)]
pub(super) struct UniqueIds {
    used: HashSet<String>,
    next: HashMap<String, u64>,
    /// Every id taken, in order: the id, its base, and the base's next suffix before.
    taken: Vec<(String, String, Option<u64>)>,
}

impl UniqueIds {
    /// `base` itself if unused, else its first free `base_k`.
    pub(super) fn unique(&mut self, base: &str) -> String {
        let before = self.next.get(base).copied();
        let id = if self.used.insert(base.to_owned()) {
            base.to_owned()
        } else {
            let mut k = before.unwrap_or(2);
            loop {
                let id = format!("{base}_{k}");
                k += 1;
                if self.used.insert(id.clone()) {
                    self.next.insert(base.to_owned(), k);
                    break id;
                }
            }
        };
        self.taken.push((id.clone(), base.to_owned(), before));
        id
    }

    /// How many ids are taken.
    pub(super) fn mark(&self) -> usize {
        self.taken.len()
    }

    /// Gives back every id taken since `mark`.
    pub(super) fn reset(&mut self, mark: usize) {
        for (id, base, before) in self.taken.drain(mark.min(self.taken.len())..).rev() {
            self.used.remove(&id);
            match before {
                Some(k) => self.next.insert(base, k),
                None => self.next.remove(&base),
            };
        }
    }
}

/// The id of `call`, borrowed from the history where the call is.
fn id_of<'h>(call: &Cow<'h, ToolCall>) -> Cow<'h, str> {
    match call {
        Cow::Borrowed(c) => Cow::Borrowed(c.id.as_str()),
        Cow::Owned(c) => Cow::Owned(c.id.clone()),
    }
}

/// The name a call is sent with: a request needs one, so an empty name (which every
/// fallible way in refuses) is sent as `tool`.
pub(super) fn tool_name(name: &str) -> &str {
    if name.is_empty() { "tool" } else { name }
}

/// One rendered call, with the id it has in the request.
#[derive(Debug, Clone)]
pub(super) struct OutCall<'h> {
    pub(super) id: String,
    pub(super) call: Cow<'h, ToolCall>,
}

/// One piece of a rendered message, in the message's order.
#[derive(Debug, Clone)]
pub(super) enum Piece<'h> {
    /// A text.
    Text(Cow<'h, str>),
    /// The message's call at this index of its `calls`.
    Call(usize),
    /// Reasoning (each format sends only its own provider's).
    Reasoning(Cow<'h, Reasoning>),
    /// An image.
    Image(Cow<'h, Media>),
    /// A document.
    Document(Cow<'h, Media>),
}

impl Piece<'_> {
    /// Whether it sends nothing in any format (a blank text).
    fn is_blank(&self) -> bool {
        matches!(self, Piece::Text(t) if t.trim().is_empty())
    }
}

/// Pieces (text, reasoning, media and, for the assistant, calls) of one role.
#[derive(Debug, Clone)]
pub(super) struct Msg<'h> {
    pub(super) role: Role,
    pub(super) pieces: Vec<Piece<'h>>,
    pub(super) calls: Vec<OutCall<'h>>,
    pub(super) ext: &'h Map<String, Value>,
}

/// A provider-neutral rendered message.
#[derive(Debug, Clone)]
pub(super) enum Out<'h> {
    /// A message of one role (see [`Msg`]).
    Msg(Msg<'h>),
    /// A tool result answering the call with `id`, and the media it returned.
    Res {
        id: String,
        content: Cow<'h, str>,
        is_error: bool,
        media: Vec<Piece<'h>>,
        ext: &'h Map<String, Value>,
    },
}

/// Items after forms are applied, before pairing.
#[derive(Debug)]
pub(super) enum Item<'h> {
    Msg {
        role: Role,
        pieces: Vec<Piece<'h>>,
        calls: Vec<Cow<'h, ToolCall>>,
        ext: &'h Map<String, Value>,
        entry: EntryId,
    },
    Res {
        call_id: Cow<'h, str>,
        content: Cow<'h, str>,
        is_error: bool,
        media: Vec<Piece<'h>>,
        ext: &'h Map<String, Value>,
        entry: EntryId,
    },
}

/// One part of a shown message, borrowed from the entry or owned by the form.
enum PartOf<'h> {
    Piece(Piece<'h>),
    Call(Cow<'h, ToolCall>),
    Result(Cow<'h, str>, Cow<'h, str>, bool),
}

/// A part of a message borrowed from the entry.
fn borrowed_part(p: &Part) -> PartOf<'_> {
    match p {
        Part::Text(t) => PartOf::Piece(Piece::Text(Cow::Borrowed(t.as_str()))),
        Part::Reasoning(r) => PartOf::Piece(Piece::Reasoning(Cow::Borrowed(r))),
        Part::Image(m) => PartOf::Piece(Piece::Image(Cow::Borrowed(m))),
        Part::Document(m) => PartOf::Piece(Piece::Document(Cow::Borrowed(m))),
        Part::ToolCall(c) => PartOf::Call(Cow::Borrowed(c)),
        Part::ToolResult(r) => PartOf::Result(
            Cow::Borrowed(r.call_id.as_str()),
            Cow::Borrowed(r.content.as_str()),
            r.is_error,
        ),
    }
}

/// A part of a message the form made, moved.
fn owned_part<'h>(p: Part) -> PartOf<'h> {
    match p {
        Part::Text(t) => PartOf::Piece(Piece::Text(Cow::Owned(t))),
        Part::Reasoning(r) => PartOf::Piece(Piece::Reasoning(Cow::Owned(*r))),
        Part::Image(m) => PartOf::Piece(Piece::Image(Cow::Owned(*m))),
        Part::Document(m) => PartOf::Piece(Piece::Document(Cow::Owned(*m))),
        Part::ToolCall(c) => PartOf::Call(Cow::Owned(*c)),
        Part::ToolResult(r) => {
            PartOf::Result(Cow::Owned(r.call_id), Cow::Owned(r.content), r.is_error)
        }
    }
}

/// Splits the message an entry shows (see [`Form::message_for`](crate::render::Form::message_for), the one owner of what
/// each form sends) into items: one per result (with the media that follow it), and one
/// for its other pieces and calls if any.
fn push_message<'h>(items: &mut Vec<Item<'h>>, message: Cow<'h, Message>, entry: &'h Entry) {
    match message {
        Cow::Borrowed(m) => push_parts(items, m.role, m.parts.iter().map(borrowed_part), entry),
        Cow::Owned(m) => push_parts(items, m.role, m.parts.into_iter().map(owned_part), entry),
    }
}

/// [`push_message`] of a message of `role` with `parts`.
fn push_parts<'h>(
    items: &mut Vec<Item<'h>>,
    role: Role,
    parts: impl Iterator<Item = PartOf<'h>>,
    entry: &'h Entry,
) {
    let ext = &entry.message().extensions;
    let mut pieces: Vec<Piece<'h>> = Vec::new();
    let mut calls = Vec::new();
    // The last result pushed, which media that follow belong to (see `Media`).
    let mut result: Option<usize> = None;
    for part in parts {
        match part {
            PartOf::Piece(m @ (Piece::Image(_) | Piece::Document(_))) if result.is_some() => {
                if let Some(Item::Res { media, .. }) = result.and_then(|r| items.get_mut(r)) {
                    media.push(m);
                }
            }
            PartOf::Piece(p) => pieces.push(p),
            PartOf::Call(c) => {
                pieces.push(Piece::Call(calls.len()));
                calls.push(c);
            }
            PartOf::Result(call_id, content, is_error) => {
                result = Some(items.len());
                items.push(Item::Res {
                    call_id,
                    content,
                    is_error,
                    media: Vec::new(),
                    ext,
                    entry: entry.id(),
                });
            }
        }
    }
    let role = match role {
        Role::Tool => Role::User,
        r => r,
    };
    if !pieces.is_empty() {
        items.push(Item::Msg {
            role,
            pieces,
            calls,
            ext,
            entry: entry.id(),
        });
    }
}

/// The pinned system entries with their text (blank ones are not sent).
pub(super) fn system_pins(history: &History) -> Vec<(&Entry, String)> {
    let mut system = Vec::new();
    for id in history.pinned() {
        let Some(entry) = history.entry(*id) else {
            continue;
        };
        // Pins of other roles are in the view, where they were recorded.
        if entry.message().role == Role::System {
            let text = sent::system_text(entry.message());
            if !text.trim().is_empty() {
                system.push((entry, text));
            }
        }
    }
    system
}

/// The items view item `item` is sent as (none if its entry is not held); a summary
/// whose block `blocks` holds borrows it.
fn push_item<'h>(
    items: &mut Vec<Item<'h>>,
    history: &'h History,
    item: &'h ViewItem,
    blocks: Option<&'h SummaryBlocks>,
) {
    let Some(entry) = history.entry(item.id) else {
        return;
    };
    if let Some(text) = blocks.and_then(|b| b.text_of(item, entry)) {
        // What `push_message` makes of the summary's message (one user text).
        items.push(Item::Msg {
            role: Role::User,
            pieces: vec![Piece::Text(text)],
            calls: Vec::new(),
            ext: &entry.message().extensions,
            entry: entry.id(),
        });
        return;
    }
    let message = if item.shape.sent_as_is && matches!(item.form, Form::Verbatim) {
        // What `message_for` gives it, known when it was recorded.
        Cow::Borrowed(entry.message())
    } else {
        item.form.message_for(entry)
    };
    push_message(items, message, entry);
}

/// Whether the first turn note goes first: when the first message that sends something
/// is an assistant turn, or nothing sends anything in a view that is not empty.
fn needs_note<'a, 'h: 'a>(mut out: impl Iterator<Item = &'a Out<'h>>, view_empty: bool) -> bool {
    // The first message that sends something (blank texts are not sent by Anthropic).
    match out.find(|o| sends(o)) {
        Some(Out::Msg(m)) => m.role == Role::Assistant,
        Some(Out::Res { .. }) => false,
        None => !view_empty,
    }
}

/// Whether a rendered message sends something (blank texts are not sent by Anthropic).
fn sends(o: &Out<'_>) -> bool {
    match o {
        Out::Msg(m) => m.pieces.iter().any(|p| !p.is_blank()),
        Out::Res { .. } => true,
    }
}

/// The note user turn (see [`FIRST_TURN_NOTE`]).
fn note() -> Out<'static> {
    Out::Msg(Msg {
        role: Role::User,
        pieces: vec![Piece::Text(Cow::Borrowed(FIRST_TURN_NOTE))],
        calls: Vec::new(),
        ext: empty_map(),
    })
}

/// The pinned system texts and the neutral rendered sequence with pairing repaired.
pub(super) fn neutral(history: &History) -> (Vec<(&Entry, String)>, Vec<Out<'_>>) {
    let system = system_pins(history);
    let mut items: Vec<Item<'_>> = Vec::new();
    for item in history.view().items() {
        push_item(&mut items, history, item, None);
    }
    let mut out = pair(history, &mut items);
    if needs_note(out.iter(), history.view().is_empty()) {
        // Anthropic requires a user turn first (and a request holds at least one
        // message); both formats send the same note, so that both send what usage counts.
        out.insert(0, note());
    }
    (system, out)
}

/// The ids a message's calls are sent with: each call's own (`call` if empty), made
/// unique within the message ([`UniqueIds`], only needed when it has several calls).
fn call_ids<'h>(calls: Vec<Cow<'h, ToolCall>>) -> Vec<OutCall<'h>> {
    // An empty id is sent as `call` (a request needs one).
    fn sent(call: &ToolCall) -> &str {
        if call.id.is_empty() { "call" } else { &call.id }
    }
    if calls.len() == 1 {
        return calls
            .into_iter()
            .map(|call| OutCall {
                id: sent(&call).to_owned(),
                call,
            })
            .collect();
    }
    let mut seen = UniqueIds::default();
    calls
        .into_iter()
        .map(|call| OutCall {
            id: seen.unique(sent(&call)),
            call,
        })
        .collect()
}

/// Where each call's result is, and the repaired sequence. Every item is sent once: a
/// message where it stands, a result after its call's message (or as an orphan note
/// where it stands), so each gives up its parts to what it is sent as.
fn pair<'h>(history: &'h History, items: &mut Vec<Item<'h>>) -> Vec<Out<'h>> {
    let (answer, answered) = match_results(items);
    // The last item that renders as a message of its own (a message, or a result whose
    // call is not in the request): calls made there with no result are the in-flight tail.
    let last_msg = items
        .iter()
        .enumerate()
        .rev()
        .find(|(i, item)| matches!(item, Item::Msg { .. }) || !answered[*i])
        .map(|(i, _)| i);

    // Emit, pulling each call's result up to directly after its assistant message.
    // A result pulled up is emitted there, not where it stands.
    let mut out = Vec::with_capacity(items.len());
    let mut next_call = 0usize;
    for i in 0..items.len() {
        match &mut items[i] {
            Item::Msg { .. } => {
                let answers = answer.get(next_call..).unwrap_or_default();
                let tail = Some(i) == last_msg;
                next_call += emit_message(history, items, i, answers, tail, &mut out);
            }
            Item::Res {
                call_id,
                content,
                is_error,
                media,
                ext,
                entry,
            } => {
                if answered[i] {
                    continue;
                }
                let mut pieces = vec![Piece::Text(Cow::Owned(orphan_result(
                    *entry, call_id, content, *is_error,
                )))];
                pieces.append(media);
                out.push(Out::Msg(Msg {
                    role: Role::User,
                    pieces,
                    calls: Vec::new(),
                    ext,
                }));
            }
        }
    }
    // Emptied, its room kept for the next segment's items.
    items.clear();
    out
}

/// Assigns each result to the most recent unanswered call with its id before it: per call
/// (numbered in order), the item of its result; per item, whether it is a result that
/// answers a call of the request.
fn match_results(items: &[Item<'_>]) -> (Vec<Option<usize>>, Vec<bool>) {
    let mut open: sent::Matcher<'_, usize> = sent::Matcher::default();
    let mut answer: Vec<Option<usize>> = Vec::new();
    let mut answered = vec![false; items.len()];
    for (i, item) in items.iter().enumerate() {
        match item {
            Item::Msg { calls, .. } => {
                for call in calls {
                    open.call(Cow::Borrowed(call.id.as_str()), i as u64, answer.len());
                    answer.push(None);
                }
            }
            Item::Res { call_id, .. } => {
                if let Some(slot) = open.answer(call_id).and_then(|k| answer.get_mut(k)) {
                    *slot = Some(i);
                    answered[i] = true;
                }
            }
        }
    }
    (answer, answered)
}

/// Emits the message `items[i]` and, after it, the result of each of its calls (`answers`
/// holds where each is, from its first call on); returns how many calls it made. A call
/// with no result in the request is answered by a placeholder pointing at its later
/// result, or a missing-result note, except in the in-flight `tail`.
fn emit_message<'h>(
    history: &'h History,
    items: &mut [Item<'h>],
    i: usize,
    answers: &[Option<usize>],
    tail: bool,
    out: &mut Vec<Out<'h>>,
) -> usize {
    let Item::Msg {
        role,
        pieces,
        calls,
        ext,
        entry,
    } = &mut items[i]
    else {
        return 0;
    };
    let (role, ext, entry) = (*role, *ext, *entry);
    let pieces = std::mem::take(pieces);
    let out_calls = call_ids(std::mem::take(calls));
    // The message goes first; its calls are put in once their results (which need their
    // ids) follow it.
    let at = out.len();
    out.push(Out::Msg(Msg {
        role,
        pieces,
        calls: Vec::new(),
        ext,
    }));
    for (c, call) in out_calls.iter().enumerate() {
        let result = match answers.get(c).copied().flatten() {
            Some(r) => match &mut items[r] {
                Item::Res {
                    content,
                    is_error,
                    media,
                    ext,
                    ..
                } => Out::Res {
                    id: call.id.clone(),
                    content: std::mem::take(content),
                    is_error: *is_error,
                    media: std::mem::take(media),
                    ext,
                },
                Item::Msg { .. } => continue,
            },
            None => {
                let later = history
                    .result_entries(&call.call.id)
                    .iter()
                    .find(|r| **r > entry)
                    .copied();
                let content = match later {
                    Some(r) => Cow::Owned(placeholder_text(r, None)),
                    None if tail => continue, // in-flight tail
                    None => Cow::Borrowed(missing_result()),
                };
                Out::Res {
                    id: call.id.clone(),
                    content,
                    is_error: false,
                    media: Vec::new(),
                    ext: empty_map(),
                }
            }
        };
        out.push(result);
    }
    let made = out_calls.len();
    if let Some(Out::Msg(msg)) = out.get_mut(at) {
        msg.calls = out_calls;
    }
    made
}
