//! The view: what the model is shown, derived from the history by recorded compactions.
//!
//! The history itself is never edited. A compaction is recorded as a [`Compaction`]
//! (summaries it wrote, entries it dropped, entries it reshaped) and applied to the view.
//! Replaying the same records over the same entries gives the same view.

use std::sync::OnceLock;

use std::num::NonZeroU8;

use serde::{Deserialize, Deserializer, Serialize};

pub use crate::history::summary::Summary;
use crate::model::entry::{Entry, EntryId, EntryKind};
use crate::model::message::Role;
use crate::model::retention::Retention;
use crate::sent::Form;
use crate::sent::Staying;

mod derive;
pub(crate) use derive::derive;

/// One item of the view: an entry, the form it is shown in, and what it costs.
///
/// ```
/// use favur_context::render::Form;
/// use favur_context::{fuzzy, History};
/// let mut h = History::new();
/// let id = h.append(fuzzy!(user: "hello"));
/// let item = &h.view().items()[0];
/// assert_eq!((item.id, &item.form), (id, &Form::Verbatim));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ViewItem {
    /// The entry shown.
    pub id: EntryId,
    /// How it is shown.
    pub form: Form,
    /// Its token count in this form (content only, without the framing of its blocks).
    pub tokens: u32,
    /// What planning needs of the entry, copied here so that planning reads no entry.
    #[serde(skip)]
    pub(crate) shape: Shape,
    /// Content blocks it is sent as in this form (texts, tool calls, tool results): each
    /// costs the history's framing tokens.
    #[serde(skip)]
    pub(crate) blocks: u32,
}

impl ViewItem {
    /// The retention class of the entry shown.
    ///
    /// ```
    /// use favur_context::{fuzzy, History, Retention};
    /// let mut h = History::new();
    /// h.append(fuzzy!(user: "hello"));
    /// assert_eq!(h.view().items()[0].retention(), Retention::Fuzzy);
    /// ```
    pub fn retention(&self) -> Retention {
        self.shape.retention
    }

    /// The role of the entry shown.
    ///
    /// ```
    /// use favur_context::{fuzzy, History, Role};
    /// let mut h = History::new();
    /// h.append(fuzzy!(assistant: "hello"));
    /// assert_eq!(h.view().items()[0].role(), Role::Assistant);
    /// ```
    pub fn role(&self) -> Role {
        self.shape.role
    }

    /// The content blocks it is sent as in its form (texts, tool calls, tool results;
    /// blank texts not counted): usage adds the history's framing tokens for each.
    ///
    /// ```
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// h.append(fuzzy!(user: "hello"));
    /// assert_eq!(h.view().items()[0].blocks(), 1);
    /// ```
    pub fn blocks(&self) -> u64 {
        u64::from(self.blocks)
    }

    /// Whether the entry is pinned: shown verbatim where it was recorded, never
    /// compacted (an edit naming it is refused).
    ///
    /// ```
    /// use favur_context::{strict, History};
    /// let mut h = History::new();
    /// h.pin(strict!(user: "the task"));
    /// assert!(h.view().items()[0].is_pinned());
    /// ```
    pub fn is_pinned(&self) -> bool {
        self.shape.pinned
    }
}

/// The few facts about an entry that planning reads for every view item: class, role,
/// number of parts (saturated), whether it is a summary, and whether it is a plain-chat
/// command turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) retention: Retention,
    pub(crate) role: Role,
    pub(crate) parts: u16,
    pub(crate) summary: bool,
    /// Pinned: shown where it was recorded, verbatim, never compacted.
    pub(crate) pinned: bool,
    /// A plain-chat assistant turn (no tool calls) that writes a fenced command: it can
    /// stay as its command ([`Form::Command`]) while its observation stays.
    pub(crate) command: bool,
    /// Sent as it is recorded when shown verbatim: not a summary, and nothing in it to
    /// neutralize or rewrite (see `sent::as_sent`). Decided once, when it is recorded, so
    /// that no render scans its text again.
    pub(crate) sent_as_is: bool,
}

impl Shape {
    pub(crate) fn of(entry: &Entry) -> Shape {
        let sent_as_is = !entry.kind.is_summary()
            && matches!(
                crate::sent::as_sent(&entry.message),
                std::borrow::Cow::Borrowed(_)
            );
        Shape::with_sent(entry, sent_as_is)
    }

    /// [`Shape::of`] of an entry whose `sent_as_is` is known (from the scan that counted
    /// its tokens: see `usage::recorded_cost_and_sent`).
    pub(crate) fn with_sent(entry: &Entry, sent_as_is: bool) -> Shape {
        Shape {
            retention: entry.retention,
            role: entry.message.role,
            parts: u16::try_from(entry.message.parts.len()).unwrap_or(u16::MAX),
            summary: entry.kind.is_summary(),
            pinned: entry.kind == EntryKind::Pinned,
            command: entry.message.role == Role::Assistant
                && entry.message.tool_calls().next().is_none()
                && crate::sent::has_command(&entry.message),
            sent_as_is,
        }
    }
}

/// The ordered items the model is shown: every entry but the pinned system entries (sent
/// first, as system messages), pinned entries of other roles included, in place.
///
/// Keeps a running token total, so reading it is O(1).
///
/// ```
/// use favur_context::{fuzzy, History};
/// let mut h = History::new();
/// h.append(fuzzy!(user: "one"));
/// h.append(fuzzy!(assistant: "two"));
/// assert_eq!(h.view().len(), 2);
/// assert_eq!(h.view().tokens(), h.entries().iter().map(|e| e.tokens() as u64).sum::<u64>());
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct View {
    items: Vec<ViewItem>,
    #[serde(skip)]
    tokens: u64,
    #[serde(skip)]
    blocks: u64,
    /// Per item, the reduced form planning would show it in and its cost, computed the
    /// first time a plan asks (an item's entry and form never change; a compaction
    /// makes new items).
    #[serde(skip)]
    staying: Memo,
}

/// A planner's cache of what each item costs in the reduced form it would stay in (see
/// [`View::staying`]): not part of what a view is, so never compared nor shown (two
/// equal views print the same whatever their caches hold).
#[derive(Clone, Default)]
struct Memo(Vec<OnceLock<Option<Staying>>>);

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Memo(..)")
    }
}

impl PartialEq for Memo {
    fn eq(&self, _: &Memo) -> bool {
        true
    }
}

impl View {
    /// The items, in order.
    ///
    /// ```
    /// use favur_context::{fuzzy, strict, History};
    /// let mut h = History::new();
    /// h.pin(strict!(user: "the task"));
    /// let note = h.append(fuzzy!(user: "a note"));
    /// let ids: Vec<_> = h.view().items().iter().map(|i| i.id).collect();
    /// assert_eq!(ids, [h.pinned()[0], note]); // a task pinned in place stays in order
    /// ```
    pub fn items(&self) -> &[ViewItem] {
        &self.items
    }

    /// Number of items.
    ///
    /// ```
    /// use favur_context::{fuzzy, strict, History};
    /// let mut h = History::new();
    /// h.pin(strict!(system: "be brief")); // a system pin goes to the system messages
    /// h.append(fuzzy!(user: "hi"));
    /// assert_eq!(h.view().len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the view is empty.
    ///
    /// ```
    /// use favur_context::compact::{Compaction, Edit};
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// let id = h.append(fuzzy!(user: "hi"));
    /// h.apply(Compaction { tier: std::num::NonZeroU8::new(3).unwrap(), edits: vec![Edit::Drop { id }], usage_after: None }).unwrap();
    /// assert!(h.view().is_empty()); // the entry is still in the history
    /// assert_eq!(h.len(), 1);
    /// ```
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Sum of the items' token counts (without framing), kept up to date on every change.
    ///
    /// ```
    /// use favur_context::compact::{Compaction, Edit};
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// let a = h.append(fuzzy!(user: "one two three"));
    /// h.append(fuzzy!(user: "four"));
    /// let both = h.view().tokens();
    /// h.apply(Compaction { tier: std::num::NonZeroU8::new(3).unwrap(), edits: vec![Edit::Drop { id: a }], usage_after: None }).unwrap();
    /// assert_eq!(h.view().tokens(), both - u64::from(h.entries()[0].tokens()));
    /// ```
    pub fn tokens(&self) -> u64 {
        self.tokens
    }

    /// Content blocks the items are sent as, kept up to date on every change.
    pub(crate) fn blocks(&self) -> u64 {
        self.blocks
    }

    pub(crate) fn push(&mut self, item: ViewItem) {
        self.tokens += u64::from(item.tokens);
        self.blocks += u64::from(item.blocks);
        self.items.push(item);
        self.staying.0.push(OnceLock::new());
    }

    pub(crate) fn from_items(items: Vec<ViewItem>) -> Self {
        let tokens = items.iter().map(|i| u64::from(i.tokens)).sum();
        let blocks = items.iter().map(|i| u64::from(i.blocks)).sum();
        let staying = Memo(items.iter().map(|_| OnceLock::new()).collect());
        View {
            items,
            tokens,
            blocks,
            staying,
        }
    }

    /// What item `i` costs in the reduced form planning would show it in: computed by
    /// `compute` the first time, remembered for as long as the item is in this view
    /// (the counter of a history never changes).
    pub(crate) fn staying(
        &self,
        i: usize,
        compute: impl FnOnce() -> Option<Staying>,
    ) -> Option<Staying> {
        match self.staying.0.get(i) {
            Some(cell) => *cell.get_or_init(compute),
            None => compute(),
        }
    }
}

/// One change a compaction makes to the view.
///
/// ```
/// use favur_context::compact::Edit;
/// use favur_context::EntryId;
/// let edit = Edit::Drop { id: EntryId(4) };
/// assert_eq!(serde_json::to_string(&edit).unwrap(), r#"{"drop":{"id":4}}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Edit {
    /// The entries in `replaces` (a contiguous run of the view) leave it and `summary`, a
    /// new entry of kind [`EntryKind::Summary`], takes their place.
    Summarize {
        /// The new summary entry (its id must be the history's next id); in a record a
        /// history holds, only its id (see [`Summary`]).
        summary: Summary,
    },
    /// The entry leaves the view (it stays in the history, retrievable by id).
    Drop {
        /// The entry dropped.
        id: EntryId,
    },
    /// The entry stays in the view in another form. Takes precedence over a summary that
    /// also names it (a tool result summarized while its call stays becomes a placeholder).
    Reform {
        /// The entry reshaped.
        id: EntryId,
        /// Its new form.
        form: Form,
        /// Its token count in that form.
        tokens: u32,
    },
}

/// A recorded compaction: the tier that fired and the edits it made, applied to the view
/// in one batch. The history is never edited; only the view is derived anew.
///
/// ```
/// use std::num::NonZeroU8;
/// use favur_context::compact::{Compaction, Edit};
/// use favur_context::EntryId;
/// let tier = NonZeroU8::new(2).unwrap();
/// let c = Compaction { tier, edits: vec![Edit::Drop { id: EntryId(0) }], usage_after: None };
/// let json = serde_json::to_string(&c).unwrap(); // as a journal records it
/// assert_eq!(json, r#"{"tier":2,"edits":[{"drop":{"id":0}}]}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compaction {
    /// The tier that fired (tiers are numbered from 1; a record with tier 0 is refused
    /// when read).
    #[serde(deserialize_with = "tier_number")]
    pub tier: NonZeroU8,
    /// What it changed.
    pub edits: Vec<Edit>,
    /// Usage (tokens) right after it was applied, as the engine measured it; `None` in
    /// records written by hand or by earlier versions. The engine's state is derived from
    /// it: the tiers a compaction covered are those this usage still reaches, so a
    /// history reopened at any step compacts exactly as an uninterrupted one (see
    /// [`Compactor::due`](crate::Compactor::due)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_after: Option<u64>,
}

/// Reads a compaction's tier: the plain number, refused when 0 (no tier fires as 0).
fn tier_number<'de, D: Deserializer<'de>>(d: D) -> Result<NonZeroU8, D::Error> {
    let n = u8::deserialize(d)?;
    NonZeroU8::new(n)
        .ok_or_else(|| serde::de::Error::custom("invalid tier 0: tiers are numbered from 1"))
}

/// Why a compaction record could not be applied. The view is unchanged when this is
/// returned.
///
/// ```
/// use favur_context::compact::{ApplyError, Compaction, Edit};
/// use favur_context::store::RecordError;
/// use favur_context::{EntryId, History};
/// let mut h = History::new();
/// let err = h.apply(Compaction { tier: std::num::NonZeroU8::MIN, edits: vec![Edit::Drop { id: EntryId(9) }], usage_after: None }).unwrap_err();
/// assert_eq!(err, RecordError::Compaction(ApplyError::NotInView { id: EntryId(9) }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// An edit names an entry that is not in the view.
    #[error("compaction names entry {id}, which is not in the view")]
    NotInView {
        /// The unknown id.
        id: EntryId,
    },
    /// Two edits name the same entry in incompatible ways.
    #[error("compaction edits entry {id} more than once")]
    Conflict {
        /// The id edited twice.
        id: EntryId,
    },
    /// A summary entry does not carry the next id.
    #[error("summary has id {found}, expected the next id {expected}")]
    SummaryId {
        /// The id expected.
        expected: EntryId,
        /// The id found.
        found: EntryId,
    },
    /// A summary entry is not of kind summary or replaces nothing.
    #[error("entry {id} in a summarize edit is not a summary of at least one entry")]
    NotASummary {
        /// The offending entry.
        id: EntryId,
    },
    /// An edit names a pinned entry: pinned entries are shown verbatim in every request.
    #[error("compaction names entry {id}, which is pinned")]
    Pinned {
        /// The pinned entry.
        id: EntryId,
    },
    /// A reform shows a form that is not derived from its own entry (a capped message of
    /// another role, extensions or content than the entry's, its text not cut by the
    /// per-entry cap).
    #[error("the reform of entry {id} shows a form not derived from it: {problem}")]
    ForeignForm {
        /// The reformed entry.
        id: EntryId,
        /// What does not match.
        problem: &'static str,
    },
    /// A summary entry holds more than user or assistant text (another role, tool calls or
    /// results).
    #[error("summary {id} is not user or assistant text")]
    SummaryContent {
        /// The summary.
        id: EntryId,
    },
    /// A summarize edit names its summary by id only (as the records a history holds
    /// do): a record to apply carries the entry (see
    /// [`History::compaction_in_full`](crate::History::compaction_in_full)).
    #[error("summary {id} is named by id only, without its entry")]
    SummaryNotHeld {
        /// The summary's id.
        id: EntryId,
    },
    /// A placeholder form points at a summary that the compaction does not write and the
    /// view does not hold (or at an entry that is not a summary).
    #[error("placeholder for {id} points at unknown summary {summary}")]
    UnknownSummary {
        /// The placeholder's entry.
        id: EntryId,
        /// The missing summary.
        summary: EntryId,
    },
}
