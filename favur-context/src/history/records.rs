//! What flows into a history: drafted entries and checked compaction records.
//!
//! Every store records the same way: it drafts the entries ([`History::draft`]) or checks
//! the compaction ([`History::check`]), persists the result, then commits it here
//! ([`History::insert`], [`History::commit`]). Nothing changes in memory before the
//! store has what it must keep.

use crate::history::RecallError;
use crate::history::view::{self, Compaction, Edit, Shape, Summary, View, ViewItem};
use crate::history::{NewEntry, RecordError};
use crate::model::entry::{Entry, EntryId, EntryKind};
use crate::model::message::Role;
use crate::model::site::Site;
use crate::sent::{self, Form};

use super::History;

/// A compaction record checked against a history ([`History::check`]): what it derives,
/// ready to be persisted and then committed with [`History::commit`].
///
/// ```
/// use favur_context::compact::{Compaction, Edit};
/// use favur_context::{fuzzy, History};
/// let mut h = History::new();
/// let id = h.append(fuzzy!(user: "old"));
/// let checked = h.check(Compaction { tier: std::num::NonZeroU8::new(2).unwrap(), edits: vec![Edit::Drop { id }], usage_after: None }).unwrap();
/// assert_eq!(checked.compaction().tier.get(), 2);
/// assert_eq!(h.view().len(), 1); // nothing changed yet
/// h.commit(checked).unwrap();
/// assert!(h.view().is_empty());
/// ```
#[derive(Debug, Clone)]
pub struct CheckedCompaction {
    compaction: Compaction,
    view: View,
    summaries: Vec<Entry>,
    /// The history it was checked against: its instance, next id and number of
    /// compactions.
    stamp: (u64, u64, usize),
}

impl CheckedCompaction {
    /// The view the compaction derives.
    pub(crate) fn view(&self) -> &View {
        &self.view
    }

    /// The compaction record, as a store persists it.
    pub fn compaction(&self) -> &Compaction {
        &self.compaction
    }

    /// The compaction record, its token counts set by the check (the history's own): to
    /// persist or apply elsewhere.
    pub fn into_compaction(self) -> Compaction {
        self.compaction
    }

    /// Records the usage the compaction leaves ([`Compaction::usage_after`]), which the
    /// check does not read.
    pub(crate) fn set_usage_after(&mut self, usage: u64) {
        self.compaction.usage_after = Some(usage);
    }

    /// How many ids its summaries take (from the history's next id on).
    pub fn summaries(&self) -> usize {
        self.summaries.len()
    }
}

impl History {
    /// The entries `entries` would become if recorded now, in order: the next ids, tokens
    /// counted with this history's counter. Changes nothing: a store persists them, then
    /// records them with [`insert`](History::insert).
    ///
    /// ```
    /// use favur_context::store::NewEntry;
    /// use favur_context::{fuzzy, strict, EntryId, History};
    /// let mut h = History::new();
    /// let drafted = h.draft(vec![NewEntry::pinned(strict!(system: "sys")), NewEntry::appended(fuzzy!(user: "hi"))]);
    /// assert_eq!((drafted[0].id(), drafted[1].id()), (EntryId(0), EntryId(1)));
    /// assert!(h.is_empty());
    /// for e in drafted { h.insert(e).unwrap(); }
    /// assert_eq!((h.pinned().len(), h.view().len()), (1, 1));
    /// ```
    pub fn draft(&self, entries: Vec<NewEntry>) -> Vec<Entry> {
        entries
            .into_iter()
            .enumerate()
            .map(|(i, new)| self.draft_one(new, i as u64))
            .collect()
    }

    /// The entry `new` would be with id `next + offset`.
    pub(super) fn draft_one(&self, new: NewEntry, offset: u64) -> Entry {
        self.draft_sent(new, offset).0
    }

    /// [`draft_one`](History::draft_one), and whether the entry is sent as it is recorded
    /// (counted from the same scan of its text, for [`push_sent`](History::push_sent)).
    pub(super) fn draft_sent(&self, new: NewEntry, offset: u64) -> (Entry, bool) {
        let (classified, kind) = new.into_parts();
        let (message, retention, site) = classified.into_parts();
        let mut entry = Entry {
            id: EntryId(self.next.saturating_add(offset)),
            retention,
            tokens: 0,
            site: Site::new(site, &self.sites),
            kind: kind.into(),
            message,
        };
        let ((tokens, _), sent_as_is) =
            super::usage::recorded_cost_and_sent(self.counter.as_ref(), &entry);
        entry.tokens = tokens;
        (entry, sent_as_is)
    }

    /// Records an entry drafted by [`draft`](History::draft) or read back from storage,
    /// keeping its id, class and site; its token count is recounted with this history's
    /// counter (a count recorded elsewhere is not trusted: an entry of 10 MB recorded
    /// with 0 tokens counts as its text does).
    ///
    /// # Errors
    ///
    /// [`RecordError::IdOrder`] unless its id is the next id; [`RecordError::Summary`]
    /// for a summary (summaries are recorded by their compaction);
    /// [`RecordError::CallId`] if its calls have an empty or repeated id. Nothing changes.
    ///
    /// ```
    /// use favur_context::store::RecordError;
    /// use favur_context::{fuzzy, History};
    /// let mut a = History::new();
    /// a.append(fuzzy!(user: "one"));
    /// a.append(fuzzy!(user: "two"));
    /// let mut b = History::new();
    /// let err = b.insert(a.entries()[1].clone()).unwrap_err();
    /// assert!(matches!(err, RecordError::IdOrder { .. }));
    /// b.insert(a.entries()[0].clone()).unwrap();
    /// assert_eq!(b.len(), 1);
    /// ```
    pub fn insert(&mut self, mut entry: Entry) -> Result<(), RecordError> {
        self.admits(&entry)?;
        entry.tokens = self.cost(&entry).0;
        self.push(entry);
        Ok(())
    }

    /// Records an entry [`draft`](History::draft)ed from this history just now: its count
    /// is this history's own.
    pub(crate) fn insert_drafted(&mut self, entry: Entry) -> Result<(), RecordError> {
        self.admits(&entry)?;
        self.push(entry);
        Ok(())
    }

    /// Whether `entry` may be recorded next.
    fn admits(&self, entry: &Entry) -> Result<(), RecordError> {
        if entry.id != self.next_id() {
            return Err(RecordError::IdOrder {
                expected: self.next_id(),
                found: entry.id,
            });
        }
        if entry.kind.is_summary() {
            return Err(RecordError::Summary { id: entry.id });
        }
        check_message(entry)
    }

    /// Checks entries drafted from this history, all before any is recorded.
    pub(crate) fn admits_all(&self, drafted: &[Entry]) -> Result<(), RecordError> {
        drafted.iter().try_for_each(check_message)
    }

    /// Records an entry whose id is the next id and that is not a summary.
    pub(super) fn push(&mut self, entry: Entry) {
        self.push_sent(entry, None);
    }

    /// [`push`](History::push) of an entry whose `sent_as_is` may be known (see
    /// [`draft_sent`](History::draft_sent)): then its text is not scanned again.
    pub(super) fn push_sent(&mut self, mut entry: Entry, sent_as_is: Option<bool>) {
        debug_assert_eq!(entry.id.0, self.next);
        self.sites.share(&mut entry.site);
        self.next = entry.id.0.saturating_add(1);
        self.index_results(&entry);
        let id = entry.id;
        let tokens = entry.tokens;
        let blocks = sent::blocks(&entry, &Form::Verbatim);
        if entry.kind == EntryKind::Pinned {
            self.pinned.push(id);
        }
        if entry.kind == EntryKind::Pinned && entry.message.role == Role::System {
            // System pins go to the system messages / parameter, before the view.
            self.pinned_tokens += u64::from(tokens);
            self.pinned_blocks += u64::from(blocks);
        } else {
            // Everything else, pins included, is shown where it was recorded.
            self.view.push(ViewItem {
                id,
                form: Form::Verbatim,
                tokens,
                shape: match sent_as_is {
                    Some(sent) => Shape::with_sent(&entry, sent),
                    None => Shape::of(&entry),
                },
                blocks,
            });
            let mut repairs = std::mem::take(&mut self.repairs);
            self.feed(&mut repairs, &entry, &Form::Verbatim);
            self.repairs = repairs;
        }
        // Notes of earlier calls that said this result was missing now name it.
        for part in &entry.message.parts {
            if let crate::model::message::Part::ToolResult(r) = part {
                self.repairs
                    .result_recorded(self.counter.as_ref(), &r.call_id, id);
            }
        }
        grow_gently(&mut self.entries);
        self.entries.push(entry);
    }

    /// Checks that `compaction` applies to the view and computes what it derives,
    /// changing nothing. A store persists [`CheckedCompaction::compaction`], then
    /// commits it with [`commit`](History::commit).
    ///
    /// The record is verified first: a reform shows only a form derived from its own
    /// entry, a summary is user or assistant text, and every token count it carries is
    /// recounted with this history's counter (the checked record carries those counts).
    ///
    /// # Errors
    ///
    /// [`RecordError::Compaction`] saying why it does not apply, naming the entry.
    ///
    /// ```
    /// use favur_context::compact::{ApplyError, Compaction, Edit};
    /// use favur_context::store::RecordError;
    /// use favur_context::{EntryId, History};
    /// let err = History::new().check(Compaction { tier: std::num::NonZeroU8::MIN, edits: vec![Edit::Drop { id: EntryId(3) }], usage_after: None }).unwrap_err();
    /// assert!(matches!(err, RecordError::Compaction(ApplyError::NotInView { .. })));
    /// ```
    pub fn check(&self, mut compaction: Compaction) -> Result<CheckedCompaction, RecordError> {
        self.verify(&mut compaction)?;
        // Whether an entry is a tool result (summaries are placed after the tool results
        // of a call that stays). Entries in the view are always held, evicted or not.
        let is_result = |id: EntryId| self.entry(id).is_some_and(|e| e.message.role == Role::Tool);
        let blocks_of =
            |id: EntryId, form: &Form| self.entry(id).map_or(0, |e| sent::blocks(e, form));
        let (view, summaries) = view::derive(
            &self.view,
            &compaction,
            self.next_id(),
            &is_result,
            &blocks_of,
        )?;
        Ok(CheckedCompaction {
            compaction,
            view,
            summaries,
            stamp: self.stamp(),
        })
    }

    /// What a check is stamped with: this history, and how far it has come.
    fn stamp(&self) -> (u64, u64, usize) {
        (self.instance(), self.next, self.compactions.len())
    }

    /// Whether `checked` was checked against this very history as it is now (not a
    /// clone, not before a later write): what [`commit`](History::commit) requires.
    pub(crate) fn is_current(&self, checked: &CheckedCompaction) -> bool {
        checked.stamp == self.stamp()
    }

    /// Commits a compaction checked against this history as it is now: the view becomes
    /// the one it derives, its summaries are recorded, and (with an
    /// [`Originals`](crate::store::Originals) reader) the originals that left the view are
    /// evicted from memory.
    ///
    /// # Errors
    ///
    /// [`RecordError::Stale`] if the history changed since the check, or the check was
    /// made on another history (a clone included). Nothing changes.
    ///
    /// ```
    /// use favur_context::compact::Compaction;
    /// use favur_context::store::RecordError;
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// let checked = h.check(Compaction { tier: std::num::NonZeroU8::MIN, edits: vec![], usage_after: None }).unwrap();
    /// h.append(fuzzy!(user: "moved on"));
    /// assert!(matches!(h.commit(checked), Err(RecordError::Stale)));
    /// ```
    pub fn commit(&mut self, checked: CheckedCompaction) -> Result<(), RecordError> {
        if !self.is_current(&checked) {
            return Err(RecordError::Stale);
        }
        let CheckedCompaction {
            mut compaction,
            view,
            summaries,
            ..
        } = checked;
        self.evict_left_view(&compaction);
        self.next += summaries.len() as u64;
        for summary in &summaries {
            self.index_results(summary);
        }
        for summary in summaries {
            grow_gently(&mut self.entries);
            self.entries.push(summary);
        }
        self.repairs = self.repairs_of(&view);
        self.view = view;
        // Held for the life of the history: its summaries only by id (the history holds
        // them), no spare capacity from how it was built.
        for edit in &mut compaction.edits {
            if let Edit::Summarize { summary } = edit {
                *summary = Summary::recorded(summary.id());
            }
        }
        compaction.edits.shrink_to_fit();
        self.compactions.push(compaction);
        Ok(())
    }

    /// `compaction` with the entry of every summary it names by id only (as the records
    /// of [`compactions`](History::compactions) do) read from this history: a record to
    /// apply to another history or to serialize on its own.
    ///
    /// # Errors
    ///
    /// The [`recall`](History::recall) error of a summary this history cannot read.
    ///
    /// ```
    /// use favur_context::compact::{ApplyError, Compaction, Edit};
    /// use favur_context::message::{CallSite, EntryKind};
    /// use favur_context::{fuzzy, Entry};
    /// use favur_context::store::RecordError;
    /// use favur_context::{History, Message, Retention};
    /// let mut h = History::new();
    /// let old = h.append(fuzzy!(user: "a long exchange"));
    /// let mut copy = h.clone();
    /// let gist = Entry::new(h.next_id(), Retention::Fuzzy, 0, CallSite::new("x.rs", 1, 1),
    ///     EntryKind::Summary { replaces: vec![old] }, Message::user("the gist"));
    /// h.apply(Compaction { tier: std::num::NonZeroU8::MIN, edits: vec![Edit::Summarize { summary: gist.into() }], usage_after: None }).unwrap();
    /// // The kept record names its summary by id: applied elsewhere, it is refused...
    /// let kept = h.compactions()[0].clone();
    /// assert!(matches!(copy.apply(kept), Err(RecordError::Compaction(ApplyError::SummaryNotHeld { .. }))));
    /// // ...in full, it applies.
    /// copy.apply(h.compaction_in_full(&h.compactions()[0]).unwrap()).unwrap();
    /// assert_eq!(copy.view(), h.view());
    /// ```
    pub fn compaction_in_full(&self, compaction: &Compaction) -> Result<Compaction, RecallError> {
        let mut full = compaction.clone();
        for edit in &mut full.edits {
            if let Edit::Summarize { summary } = edit
                && summary.entry().is_none()
            {
                *summary = Summary::from(self.recall(summary.id())?.into_owned());
            }
        }
        Ok(full)
    }

    /// Applies a compaction record to the view, recording its summary entries:
    /// [`check`](History::check) then [`commit`](History::commit). All or nothing.
    ///
    /// ```
    /// use favur_context::compact::{Compaction, Edit};
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// let id = h.append(fuzzy!(user: "old"));
    /// h.apply(Compaction { tier: std::num::NonZeroU8::new(2).unwrap(), edits: vec![Edit::Drop { id }], usage_after: None }).unwrap();
    /// assert!(h.view().is_empty());
    /// assert_eq!(h.recall(id).unwrap().message().text(), "old"); // still recallable
    /// ```
    pub fn apply(&mut self, compaction: Compaction) -> Result<(), RecordError> {
        let checked = self.check(compaction)?;
        self.commit(checked)
    }

    /// With an originals reader, drops from memory the originals of the entries that
    /// `compaction` takes out of the view (dropped or summarized, and not reformed) and
    /// that the reader holds. Afterwards the entries held are exactly the pinned ones,
    /// those in the view, and any the reader does not hold.
    fn evict_left_view(&mut self, compaction: &Compaction) {
        let Some((_, bound)) = &self.originals else {
            return;
        };
        let bound = *bound;
        let mut gone: Vec<EntryId> = Vec::new();
        let mut stays: Vec<EntryId> = Vec::new();
        for edit in &compaction.edits {
            match edit {
                Edit::Drop { id } => gone.push(*id),
                Edit::Summarize { summary } => {
                    if let Some(EntryKind::Summary { replaces }) = summary.entry().map(|e| &*e.kind)
                    {
                        gone.extend_from_slice(replaces);
                    }
                }
                Edit::Reform { id, .. } => stays.push(*id),
            }
        }
        gone.retain(|id| !stays.contains(id) && bound.is_none_or(|b| id.0 < b));
        if gone.is_empty() {
            return;
        }
        gone.sort_unstable();
        let first = self.entries.partition_point(|e| e.id < gone[0]);
        let mut tail = self.entries.split_off(first);
        tail.retain(|e| gone.binary_search(&e.id).is_err());
        self.entries.append(&mut tail);
    }
}

/// Whether an entry's message may be recorded: its calls paired unambiguously, its
/// reasoning and media well-formed.
fn check_message(e: &Entry) -> Result<(), RecordError> {
    let m = &e.message;
    m.check_call_ids()
        .map_err(|problem| RecordError::CallId { id: e.id, problem })?;
    m.parts
        .iter()
        .try_for_each(crate::model::part_check::check_part)
        .map_err(|problem| RecordError::Part { id: e.id, problem })
}

/// Makes room for one more entry, growing by an eighth instead of doubling: the entries
/// are held for the life of the history, and a doubled vector is up to half empty (at a
/// million entries, 128 MB of nothing). Large vectors are moved by the allocator's
/// `realloc` (page remapping on Linux), so the extra growth steps cost little.
fn grow_gently<T>(entries: &mut Vec<T>) {
    if entries.len() == entries.capacity() {
        entries.reserve_exact((entries.len() / 8).max(16));
    }
}

#[cfg(test)]
mod tests;
