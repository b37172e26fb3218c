//! Where a history reads back the originals it evicted from memory ([`Originals`]).

use super::errors::RecallError;
use crate::model::entry::{Entry, EntryId};

/// Where a history reads back the originals it evicted from memory (see
/// [`History::with_originals`](super::History::with_originals)): a journal's file, a database table.
///
/// ```
/// use favur_context::store::{Originals, RecallError};
/// use favur_context::{Entry, EntryId};
/// struct Nothing;
/// impl Originals for Nothing {
///     fn original(&self, id: EntryId) -> Result<Entry, RecallError> {
///         Err(RecallError::UnknownId { id, next: EntryId(0) })
///     }
/// }
/// assert!(Nothing.original(EntryId(1)).is_err());
/// ```
pub trait Originals: Send + Sync {
    /// The original entry with this id, as it was recorded.
    ///
    /// # Errors
    ///
    /// Whatever keeps it from being read back (I/O, corruption, an unknown id).
    fn original(&self, id: EntryId) -> Result<Entry, RecallError>;
}
