//! The record protocol every persistent store follows (the journal and the database
//! stores): a write is drafted and checked against the history, its record persisted by
//! the store, and only then settled in memory ([`Change`]).

use super::once::Write;
use super::{CheckedCompaction, History, NewEntry, RecordError};

/// What a write changes in memory once its record is persisted.
#[derive(Debug)]
pub(crate) enum Change {
    /// Entries recorded all or none, under their key if any.
    Entries(Write),
    /// A compaction checked against the history as it is.
    Compaction(CheckedCompaction),
    /// The request overhead from here on.
    Overhead(u64),
}

impl History {
    /// The write recording `entries`, checked, all of it before any is recorded (`None`
    /// for an empty batch, which writes nothing). Counting tokens runs the user's
    /// counter: a panic there changes nothing.
    pub(crate) fn draft_entries(
        &self,
        entries: Vec<NewEntry>,
    ) -> Result<Option<Write>, RecordError> {
        if entries.is_empty() {
            return Ok(None);
        }
        let write = self.draft_write(entries);
        self.admits_write(&write)?;
        Ok(Some(write))
    }

    /// `checked`, if it was checked against this very history as it is now:
    /// [`RecordError::Stale`] if it was checked before a later write or on another
    /// history.
    pub(crate) fn current(
        &self,
        checked: CheckedCompaction,
    ) -> Result<CheckedCompaction, RecordError> {
        match self.is_current(&checked) {
            true => Ok(checked),
            false => Err(RecordError::Stale),
        }
    }

    /// Records in memory a change whose record is persisted. An error (a change drafted
    /// or checked against this very history cannot fail) leaves memory behind the store:
    /// the store must take no more writes.
    pub(crate) fn settle(&mut self, change: Change) -> Result<(), RecordError> {
        match change {
            Change::Entries(write) => self.insert_write(write),
            Change::Compaction(checked) => self.commit(checked),
            Change::Overhead(tokens) => {
                self.set_request_overhead_tokens(tokens);
                Ok(())
            }
        }
    }
}
