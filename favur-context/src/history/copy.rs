//! A copy of a history holding every original in memory ([`History::full_copy`]).

use super::History;
use crate::history::RecallError;
use crate::model::entry::EntryId;

impl History {
    /// A copy with every original in memory (evicted ones read back), detached from the
    /// [`Originals`](crate::store::Originals) reader: e.g. to export a journaled history with
    /// [`to_json`](History::to_json).
    ///
    /// ```
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// h.append(fuzzy!(user: "x"));
    /// assert_eq!(h.full_copy().unwrap().entries(), h.entries());
    /// ```
    pub fn full_copy(&self) -> Result<History, RecallError> {
        let mut full = self.clone();
        full.originals = None;
        if full.entries.len() as u64 == full.next {
            return Ok(full);
        }
        let mut held = std::mem::take(&mut full.entries).into_iter().peekable();
        let mut all = Vec::with_capacity(self.len());
        for id in (0..self.next).map(EntryId) {
            match held.next_if(|e| e.id == id) {
                Some(e) => all.push(e),
                None => all.push(self.recall(id)?.into_owned()),
            }
        }
        full.entries = all;
        Ok(full)
    }
}
