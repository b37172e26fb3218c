//! Applying a [`Compaction`] to a [`View`]: read its edits (checking each against the
//! view), place its summaries, and build the new items. Nothing is changed until the
//! whole compaction has been checked.

use foldhash::{HashMap, HashSet};

use super::{ApplyError, Compaction, Edit, Shape, View, ViewItem};
use crate::model::entry::{Entry, EntryId, EntryKind};
use crate::sent::Form;

/// Computes the view that results from applying `compaction` to `view`, and the summary
/// entries to record, without changing anything.
///
/// `is_result` tells whether an entry is a tool-result entry: a summary whose members all
/// stay in another form is placed after its last member *and after the tool results that
/// directly follow it*, so that it never separates a tool call from its results.
/// `blocks_of` gives the content blocks an entry is sent as in a form.
pub(crate) fn derive(
    view: &View,
    compaction: &Compaction,
    next_id: EntryId,
    is_result: &dyn Fn(EntryId) -> bool,
    blocks_of: &dyn Fn(EntryId, &Form) -> u32,
) -> Result<(View, Vec<Entry>), ApplyError> {
    let mut edits = Edits::new(view, next_id);
    for edit in &compaction.edits {
        edits.read(edit)?;
    }
    edits.check_reforms()?;
    let anchored = edits.anchors(is_result);
    let items = edits.items(&anchored, blocks_of);
    Ok((
        View::from_items(items),
        edits.summaries.into_iter().cloned().collect(),
    ))
}

/// A compaction's edits, read and checked against the view they apply to.
struct Edits<'a> {
    view: &'a View,
    in_view: HashSet<EntryId>,
    pinned: HashSet<EntryId>,
    /// Entries dropped or summarized (each may be named once).
    touched: HashSet<EntryId>,
    reform: HashMap<EntryId, (&'a Form, u32)>,
    dropped: HashSet<EntryId>,
    /// The summary (index into `summaries`) each summarized entry belongs to.
    summary_of: HashMap<EntryId, usize>,
    summaries: Vec<&'a Entry>,
    /// The id the next summary must have.
    expected: EntryId,
}

impl<'a> Edits<'a> {
    fn new(view: &'a View, next_id: EntryId) -> Self {
        Edits {
            view,
            in_view: view.items.iter().map(|i| i.id).collect(),
            pinned: view
                .items
                .iter()
                .filter(|i| i.shape.pinned)
                .map(|i| i.id)
                .collect(),
            touched: HashSet::default(),
            reform: HashMap::default(),
            dropped: HashSet::default(),
            summary_of: HashMap::default(),
            summaries: Vec::new(),
            expected: next_id,
        }
    }

    /// An edit may name only an entry of the view that is not pinned.
    fn named(&self, id: &EntryId) -> Result<(), ApplyError> {
        if !self.in_view.contains(id) {
            Err(ApplyError::NotInView { id: *id })
        } else if self.pinned.contains(id) {
            Err(ApplyError::Pinned { id: *id })
        } else {
            Ok(())
        }
    }

    /// Reads one edit; an entry named twice (or reformed and dropped) is a conflict.
    fn read(&mut self, edit: &'a Edit) -> Result<(), ApplyError> {
        match edit {
            Edit::Reform { id, form, tokens } => {
                self.named(id)?;
                if self.reform.insert(*id, (form, *tokens)).is_some() || self.dropped.contains(id) {
                    return Err(ApplyError::Conflict { id: *id });
                }
            }
            Edit::Drop { id } => {
                self.named(id)?;
                if !self.touched.insert(*id) || self.reform.contains_key(id) {
                    return Err(ApplyError::Conflict { id: *id });
                }
                self.dropped.insert(*id);
            }
            Edit::Summarize { summary } => {
                let Some(summary) = summary.entry() else {
                    return Err(ApplyError::SummaryNotHeld { id: summary.id() });
                };
                self.summary(summary)?;
            }
        }
        Ok(())
    }

    /// Reads a summary: it has the next id, replaces at least one entry, and each entry
    /// it replaces is named by no other edit that drops or summarizes.
    fn summary(&mut self, summary: &'a Entry) -> Result<(), ApplyError> {
        if summary.id != self.expected {
            return Err(ApplyError::SummaryId {
                expected: self.expected,
                found: summary.id,
            });
        }
        self.expected = EntryId(self.expected.0 + 1);
        let EntryKind::Summary { replaces } = &*summary.kind else {
            return Err(ApplyError::NotASummary { id: summary.id });
        };
        if replaces.is_empty() {
            return Err(ApplyError::NotASummary { id: summary.id });
        }
        for id in replaces {
            self.named(id)?;
            if !self.touched.insert(*id) {
                return Err(ApplyError::Conflict { id: *id });
            }
            self.summary_of.insert(*id, self.summaries.len());
        }
        self.summaries.push(summary);
        Ok(())
    }

    /// A reformed entry is not also dropped, and a placeholder points at a summary this
    /// compaction writes or the view holds.
    fn check_reforms(&self) -> Result<(), ApplyError> {
        for (id, (form, _)) in &self.reform {
            if self.dropped.contains(id) {
                return Err(ApplyError::Conflict { id: *id });
            }
            if let Form::Placeholder { summary: Some(s) } = form {
                let written = self.summaries.iter().any(|e| e.id == *s);
                if !written && !self.in_view.contains(s) {
                    return Err(ApplyError::UnknownSummary {
                        id: *id,
                        summary: *s,
                    });
                }
            }
        }
        Ok(())
    }

    /// Where each summary goes (the entry it follows): at its first member that leaves
    /// the view, or, if every member stays in another form, after its last member and the
    /// tool results that directly follow it (a summary never separates a call from its
    /// results, nor a command from its observation).
    fn anchors(&self, is_result: &dyn Fn(EntryId) -> bool) -> HashMap<EntryId, Vec<usize>> {
        let items = &self.view.items;
        let mut anchor: Vec<Option<(usize, bool)>> = vec![None; self.summaries.len()];
        for (pos, item) in items.iter().enumerate() {
            if let Some(&s) = self.summary_of.get(&item.id) {
                let leaves = !self.reform.contains_key(&item.id);
                match anchor[s] {
                    Some((_, true)) => {}
                    _ => anchor[s] = Some((pos, leaves)),
                }
            }
        }
        let mut anchored: HashMap<EntryId, Vec<usize>> = HashMap::default();
        for (s, a) in anchor.iter().enumerate() {
            if let Some((mut pos, leaves)) = *a {
                if !leaves {
                    let command =
                        matches!(self.reform.get(&items[pos].id), Some((Form::Command, _)));
                    if command && pos + 1 < items.len() {
                        pos += 1;
                    }
                    while pos + 1 < items.len() && is_result(items[pos + 1].id) {
                        pos += 1;
                    }
                }
                anchored.entry(items[pos].id).or_default().push(s);
            }
        }
        anchored
    }

    /// The new view's items: each entry in its new form, without the dropped and
    /// summarized ones, and each summary after the entry it is anchored to.
    fn items(
        &self,
        anchored: &HashMap<EntryId, Vec<usize>>,
        blocks_of: &dyn Fn(EntryId, &Form) -> u32,
    ) -> Vec<ViewItem> {
        let mut items = Vec::with_capacity(self.view.items.len());
        for item in &self.view.items {
            if let Some((form, tokens)) = self.reform.get(&item.id) {
                items.push(ViewItem {
                    id: item.id,
                    form: (*form).clone(),
                    tokens: *tokens,
                    shape: item.shape,
                    blocks: blocks_of(item.id, form),
                });
            } else if !self.dropped.contains(&item.id) && !self.summary_of.contains_key(&item.id) {
                items.push(item.clone());
            }
            for &s in anchored.get(&item.id).map_or(&[][..], Vec::as_slice) {
                let e = self.summaries[s];
                items.push(ViewItem {
                    id: e.id,
                    form: Form::Verbatim,
                    tokens: e.tokens,
                    shape: Shape::of(e),
                    blocks: 1,
                });
            }
        }
        items
    }
}
