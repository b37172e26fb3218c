//! Idempotency keys: the write each key recorded, so a write retried with its key
//! ([`Store::record_once`](crate::Store::record_once)) is recorded once.
//!
//! A keyed write flows as any other: drafted ([`History::draft_write`]), checked
//! ([`History::admits_write`]), persisted as one `keyed` record (the key and the
//! entries, one line or row), then recorded here ([`History::insert_write`]). Replaying
//! that record registers the key again, so a reopened store knows every key it holds.

use std::collections::HashMap;

use super::History;
use crate::history::{NewEntry, RecordError};
use crate::model::entry::{Entry, EntryId};

/// The longest idempotency key a write may carry, in bytes (provider reply and call ids
/// are a few dozen).
pub const MAX_KEY_BYTES: usize = 256;

/// What is wrong with the idempotency key of a write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// An empty key (a missing reply id, say): refused, since it would make every later
    /// write with a missing id a repeat of the first.
    #[error("an empty idempotency key")]
    Empty,
    /// A key longer than [`MAX_KEY_BYTES`].
    #[error("an idempotency key of {len} bytes (at most {MAX_KEY_BYTES})")]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// A key the history already holds (a record read back that repeats one).
    #[error("idempotency key `{key}` already recorded the write from {first}")]
    Recorded {
        /// The key.
        key: String,
        /// The first id of the write that recorded it.
        first: EntryId,
    },
}

/// The keys a history holds: each one's write, by its first id. Small metadata kept for
/// every keyed write, whether its entries are held in memory or not.
#[derive(Debug, Clone, Default)]
pub(crate) struct Keys(HashMap<Box<str>, EntryId>);

/// Entries drafted for one write, and the write's key.
#[derive(Debug)]
pub(crate) struct Write {
    pub(crate) entries: Vec<Entry>,
    pub(crate) key: Option<Box<str>>,
}

/// `entries` as one write under `key` (the key rides on the first entry).
pub(crate) fn keyed(key: &str, mut entries: Vec<NewEntry>) -> Vec<NewEntry> {
    if let Some(first) = entries.first_mut() {
        first.once = Some(key.into());
    }
    entries
}

impl History {
    /// The first id of the write recorded with idempotency `key`, if this history holds
    /// one (see [`Store::record_once`](crate::Store::record_once)).
    ///
    /// ```
    /// use favur_context::{fuzzy, EntryId, History, Store};
    /// let mut h = History::new();
    /// h.append(fuzzy!(user: "hi"));
    /// Store::append_once(&mut h, "resp_1", fuzzy!(assistant: "hello"))?;
    /// assert_eq!(h.recorded_with_key("resp_1"), Some(EntryId(1)));
    /// assert_eq!(h.recorded_with_key("resp_2"), None);
    /// # Ok::<(), favur_context::store::RecordError>(())
    /// ```
    pub fn recorded_with_key(&self, key: &str) -> Option<EntryId> {
        self.keys.0.get(key).copied()
    }

    /// `Err` unless `key` may key a new write: not empty, not too long, not held.
    pub(crate) fn admits_key(&self, key: &str) -> Result<(), KeyError> {
        if key.is_empty() {
            return Err(KeyError::Empty);
        }
        if key.len() > MAX_KEY_BYTES {
            return Err(KeyError::TooLong { len: key.len() });
        }
        match self.recorded_with_key(key) {
            Some(first) => Err(KeyError::Recorded {
                key: key.to_owned(),
                first,
            }),
            None => Ok(()),
        }
    }

    /// The write `entries` would be if recorded now: [`draft`](History::draft), and the
    /// key the first entry carries.
    pub(crate) fn draft_write(&self, mut entries: Vec<NewEntry>) -> Write {
        let key = entries.first_mut().and_then(|e| e.once.take());
        Write {
            entries: self.draft(entries),
            key,
        }
    }

    /// Checks a write drafted from this history, all of it before any is recorded.
    pub(crate) fn admits_write(&self, write: &Write) -> Result<(), RecordError> {
        if let Some(key) = &write.key {
            self.admits_key(key)?;
        }
        self.admits_all(&write.entries)
    }

    /// Records a write drafted from this history (and persisted), its key included.
    pub(crate) fn insert_write(&mut self, write: Write) -> Result<(), RecordError> {
        let first = self.next_id();
        for entry in write.entries {
            self.insert_drafted(entry)?;
        }
        if let Some(key) = write.key {
            self.keys.0.insert(key, first);
        }
        Ok(())
    }

    /// Registers `key` as the write whose first id is `first` (a record read back).
    pub(crate) fn note_key(&mut self, key: &str, first: EntryId) {
        self.keys.0.insert(key.into(), first);
    }

    /// The key of each keyed write, by its first id (to write the records again).
    pub(crate) fn keys_by_first_id(&self) -> HashMap<EntryId, &str> {
        self.keys.0.iter().map(|(k, id)| (*id, &**k)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Store, fuzzy};

    #[test]
    fn a_key_is_bounded_and_recorded_once() {
        let mut h = History::new();
        assert_eq!(h.admits_key(""), Err(KeyError::Empty));
        let long = "k".repeat(MAX_KEY_BYTES + 1);
        assert!(matches!(h.admits_key(&long), Err(KeyError::TooLong { len }) if len == 257));
        let first = Store::append_once(&mut h, "resp_1", fuzzy!(assistant: "a")).unwrap();
        let again = Store::append_once(&mut h, "resp_1", fuzzy!(assistant: "a")).unwrap();
        assert_eq!((first, again, h.len()), (EntryId(0), EntryId(0), 1));
        assert!(matches!(
            h.admits_key("resp_1"),
            Err(KeyError::Recorded {
                first: EntryId(0),
                ..
            })
        ));
        let err = Store::append_once(&mut h, "", fuzzy!(user: "x")).unwrap_err();
        assert_eq!(err, RecordError::Key(KeyError::Empty));
        assert_eq!(h.len(), 1);
        // A clone keeps the keys.
        assert_eq!(h.clone().recorded_with_key("resp_1"), Some(EntryId(0)));
    }
}
