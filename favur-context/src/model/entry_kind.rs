//! How an entry came to be in the history ([`EntryKind`]), and how an entry stores it: in
//! one word, since almost every entry is appended.

use std::ops::Deref;

use serde::{Deserialize, Serialize};

use crate::model::entry_id::EntryId;

/// How an entry came to be in the history.
///
/// ```
/// use favur_context::message::EntryKind;
/// use favur_context::EntryId;
/// let kind = EntryKind::Summary { replaces: vec![EntryId(3), EntryId(4)] };
/// assert!(kind.is_summary());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// Appended by the agent through [`History::append`](crate::History::append).
    #[default]
    Appended,
    /// Pinned (a system prompt, the task): sent verbatim in every request (a system
    /// entry as a system message, any other in its place in the view), never compacted.
    Pinned,
    /// Written by a compaction in place of the entries it names.
    Summary {
        /// The ids of the entries this summary replaces, in order.
        replaces: Vec<EntryId>,
    },
}

impl EntryKind {
    /// Whether this is a summary.
    pub fn is_summary(&self) -> bool {
        matches!(self, EntryKind::Summary { .. })
    }
}

/// An [`EntryKind`] in 8 bytes: an appended entry (nearly all of them) holds nothing,
/// a pinned one or a summary (with its list of replaced ids) a box. Reads as the
/// `EntryKind` it holds; shown, compared and serialized as that `EntryKind`.
#[derive(Clone, Default)]
pub(crate) struct Kind(Option<Box<EntryKind>>);

static APPENDED: EntryKind = EntryKind::Appended;

impl Deref for Kind {
    type Target = EntryKind;

    fn deref(&self) -> &EntryKind {
        self.0.as_deref().unwrap_or(&APPENDED)
    }
}

impl From<EntryKind> for Kind {
    fn from(kind: EntryKind) -> Self {
        match kind {
            EntryKind::Appended => Kind(None),
            other => Kind(Some(Box::new(other))),
        }
    }
}

impl PartialEq for Kind {
    fn eq(&self, other: &Kind) -> bool {
        **self == **other
    }
}

impl PartialEq<EntryKind> for Kind {
    fn eq(&self, other: &EntryKind) -> bool {
        **self == *other
    }
}

as_held_value!(Kind => EntryKind);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::entry::{Entry, EntryId};

    #[test]
    fn a_kind_is_one_word_and_reads_as_its_entry_kind() {
        assert_eq!(std::mem::size_of::<Kind>(), 8);
        // 88 bytes with serde_json's default map (a B-tree); a build that turns on its
        // `preserve_order` (an index map) holds a larger map inline.
        let map = std::mem::size_of::<serde_json::Map<String, serde_json::Value>>();
        let btree = std::mem::size_of::<std::collections::BTreeMap<String, serde_json::Value>>();
        assert!(std::mem::size_of::<Entry>() <= 88 - btree + map);
        // A kept compaction record holds one edit per entry it drops.
        assert!(std::mem::size_of::<crate::compact::Edit>() <= 32);
        let summary = EntryKind::Summary {
            replaces: vec![EntryId(1)],
        };
        for kind in [EntryKind::Appended, EntryKind::Pinned, summary] {
            let k = Kind::from(kind.clone());
            assert_eq!(*k, kind);
            assert_eq!(format!("{k:?}"), format!("{kind:?}"));
            assert_eq!(
                serde_json::to_string(&k).unwrap(),
                serde_json::to_string(&kind).unwrap()
            );
        }
    }
}
