//! [`EntryId`]: the stable id of an entry.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The stable id of an entry in a history. Ids are dense and monotonic: the n-th entry
/// ever recorded (message, pinned message or summary) has id n, starting at 0.
///
/// ```
/// use favur_context::EntryId;
/// assert_eq!(EntryId(7).to_string(), "#7");
/// assert!(EntryId(1) < EntryId(2));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EntryId(pub u64);

impl fmt::Display for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}
