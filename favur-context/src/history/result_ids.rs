//! The entries holding a result for one tool-call id: nearly always one, kept inline
//! (a history keeps this for every call id it has seen).

use crate::model::entry::EntryId;

/// Entry ids in id order, the first one without an allocation.
#[derive(Debug, Clone)]
pub(crate) enum ResultIds {
    One(EntryId),
    Many(Vec<EntryId>),
}

impl Default for ResultIds {
    fn default() -> Self {
        ResultIds::Many(Vec::new())
    }
}

impl ResultIds {
    pub(crate) fn as_slice(&self) -> &[EntryId] {
        match self {
            ResultIds::One(id) => std::slice::from_ref(id),
            ResultIds::Many(ids) => ids,
        }
    }

    /// Adds `id` (after every id held) unless it is the last one already.
    pub(crate) fn push_new(&mut self, id: EntryId) {
        match self {
            ResultIds::Many(ids) if ids.is_empty() => *self = ResultIds::One(id),
            ResultIds::Many(ids) if ids.last() != Some(&id) => ids.push(id),
            ResultIds::One(first) if *first != id => *self = ResultIds::Many(vec![*first, id]),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_ids_in_order_without_repeating_the_last() {
        let mut ids = ResultIds::default();
        assert!(ids.as_slice().is_empty());
        for id in [3, 3, 5, 5, 9] {
            ids.push_new(EntryId(id));
        }
        assert_eq!(ids.as_slice(), &[EntryId(3), EntryId(5), EntryId(9)]);
        let mut one = ResultIds::default();
        one.push_new(EntryId(1));
        assert!(matches!(one, ResultIds::One(EntryId(1))));
    }
}
