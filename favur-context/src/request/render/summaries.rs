//! Summary blocks kept across renderings: a summary entry never changes, so a
//! [`Renderer`](super::Renderer) writes its block once and every later rendering (each
//! one after a compaction starts over from the first item) borrows it.

use std::borrow::Cow;

use crate::history::History;
use crate::history::view::ViewItem;
use crate::model::entry::{Entry, EntryId, EntryKind};
use crate::sent;
use crate::sent::Form;

/// The blocks of the verbatim summary items of one history's view, by entry id.
#[derive(Debug, Default)]
pub(super) struct SummaryBlocks {
    /// The history they were written for ([`History::instance`]) and how many compactions
    /// it had then: summaries enter, leave and change form only by compaction.
    history: Option<(u64, usize)>,
    /// In view order; a view holds few summaries.
    blocks: Vec<(EntryId, String)>,
}

impl SummaryBlocks {
    /// Holds the block of every verbatim summary item of `history`'s view, and no other:
    /// blocks already written are kept, new ones written, those of summaries no longer
    /// in the view let go.
    pub(super) fn update(&mut self, history: &History) {
        let now = (history.instance(), history.compactions().len());
        match self.history {
            Some(then) if then == now => return,
            Some((instance, _)) if instance == now.0 => {}
            _ => self.blocks.clear(),
        }
        self.history = Some(now);
        let mut old = std::mem::take(&mut self.blocks);
        for item in history.view().items() {
            if !item.shape.summary || item.form != Form::Verbatim {
                continue;
            }
            let Some(entry) = history.entry(item.id) else {
                continue;
            };
            let EntryKind::Summary { replaces } = entry.kind() else {
                continue;
            };
            let block = match old.iter().position(|(id, _)| *id == item.id) {
                Some(at) => old.swap_remove(at).1,
                None => sent::summary_block(entry.id(), replaces, &entry.message().text()),
            };
            self.blocks.push((item.id, block));
        }
    }

    /// The text `item` (of `entry`) is sent as, if it is a verbatim summary whose block
    /// is held: what [`Form::message_for`] gives it, borrowed.
    pub(super) fn text_of<'a>(&'a self, item: &ViewItem, entry: &Entry) -> Option<Cow<'a, str>> {
        if item.form != Form::Verbatim || !entry.kind().is_summary() {
            return None;
        }
        self.blocks
            .iter()
            .find(|(id, _)| *id == item.id)
            .map(|(_, block)| Cow::Borrowed(block.as_str()))
    }
}
