//! The summary of a summarize edit: the entry itself in a record on its way in, its id
//! once a history holds the entry.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::model::entry::{Entry, EntryId};

/// The summary an [`Edit::Summarize`](crate::compact::Edit::Summarize) writes.
///
/// A record built to be applied (by a compactor, by hand, read back from a journal or a
/// document) holds the summary entry itself. Once a history has recorded it, the
/// history holds the entry (among [`entries`](crate::History::entries), read it with
/// [`recall`](crate::History::recall)) and the record it keeps in
/// [`compactions`](crate::History::compactions) names it by id only, so a summary is
/// not held twice. [`History::compaction_in_full`](crate::History::compaction_in_full)
/// gives such a record with its entries again (to apply elsewhere or serialize).
///
/// Two summaries are equal when their ids are and, where both hold their entries, the
/// entries are.
///
/// ```
/// use favur_context::compact::{Compaction, Edit, Summary};
/// use favur_context::{fuzzy, History};
/// use favur_context::message::{CallSite, EntryKind};
/// use favur_context::{Entry, Message, Retention};
/// let mut h = History::new();
/// let old = h.append(fuzzy!(user: "a long exchange"));
/// let entry = Entry::new(h.next_id(), Retention::Fuzzy, 0, CallSite::new("x.rs", 1, 1),
///     EntryKind::Summary { replaces: vec![old] }, Message::user("the gist"));
/// let summary = Summary::from(entry);
/// assert_eq!(summary.entry().unwrap().message().text(), "the gist");
/// h.apply(Compaction { tier: std::num::NonZeroU8::MIN, edits: vec![Edit::Summarize { summary }], usage_after: None }).unwrap();
/// let Edit::Summarize { summary } = &h.compactions()[0].edits[0] else { unreachable!() };
/// assert!(summary.entry().is_none()); // the history holds it:
/// assert_eq!(h.recall(summary.id()).unwrap().message().text(), "the gist");
/// ```
#[derive(Debug, Clone)]
pub struct Summary(Held);

#[derive(Debug, Clone)]
enum Held {
    Entry(Box<Entry>),
    Recorded(EntryId),
}

impl Summary {
    /// A summary named by id, its entry held by the history that recorded it.
    pub(crate) fn recorded(id: EntryId) -> Summary {
        Summary(Held::Recorded(id))
    }

    /// The summary entry's id.
    pub fn id(&self) -> EntryId {
        match &self.0 {
            Held::Entry(e) => e.id,
            Held::Recorded(id) => *id,
        }
    }

    /// The summary entry, if this record holds it (not in the records a history keeps:
    /// read those with [`History::recall`](crate::History::recall)).
    pub fn entry(&self) -> Option<&Entry> {
        match &self.0 {
            Held::Entry(e) => Some(e),
            Held::Recorded(_) => None,
        }
    }

    pub(crate) fn entry_mut(&mut self) -> Option<&mut Entry> {
        match &mut self.0 {
            Held::Entry(e) => Some(e),
            Held::Recorded(_) => None,
        }
    }

    pub(crate) fn into_entry(self) -> Option<Entry> {
        match self.0 {
            Held::Entry(e) => Some(*e),
            Held::Recorded(_) => None,
        }
    }
}

impl From<Entry> for Summary {
    fn from(entry: Entry) -> Self {
        Summary(Held::Entry(Box::new(entry)))
    }
}

impl PartialEq for Summary {
    fn eq(&self, other: &Summary) -> bool {
        self.id() == other.id()
            && match (self.entry(), other.entry()) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }
}

/// Serialized as the entry (the record format of journals and documents). A summary
/// named by id only cannot be: serialize the record
/// [`in full`](crate::History::compaction_in_full), or the history itself.
impl Serialize for Summary {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Held::Entry(e) => e.serialize(s),
            Held::Recorded(id) => Err(serde::ser::Error::custom(format!(
                "summary {id} is held by its history: serialize History::compaction_in_full"
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for Summary {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Entry::deserialize(d).map(Summary::from)
    }
}
