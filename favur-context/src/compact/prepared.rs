//! What [`Compactor::prepare`](crate::Compactor::prepare) reports, and why it refuses.

use crate::compact::{CompactionReport, LimitExceeded};
use crate::history::RecordError;

/// What [`Compactor::prepare`](crate::Compactor::prepare) did before a request: the
/// compaction it recorded, if any, and the usage the request will carry.
///
/// ```
/// use favur_context::{forgettable, fuzzy, Compactor, History, Policy};
/// let mut h = History::new();
/// h.append(forgettable!(user: "{}", "ls output ".repeat(100)));
/// h.append(fuzzy!(assistant: "seen"));
/// let done = Compactor::new(Policy::for_window(2_000).unwrap()).prepare(&mut h).unwrap();
/// assert!(done.compacted());
/// assert_eq!(done.usage_tokens, h.usage_tokens());
/// assert_eq!(done.report.as_ref().unwrap().usage_after, done.usage_tokens);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The compaction recorded, or `None` when no tier was due (or nothing was
    /// compactable).
    pub report: Option<CompactionReport>,
    /// Tokens the request will carry ([`History::usage_tokens`](crate::History::usage_tokens)
    /// after the compaction).
    pub usage_tokens: u64,
}

impl Prepared {
    /// Whether a compaction was recorded.
    pub fn compacted(&self) -> bool {
        self.report.is_some()
    }
}

/// Why [`Compactor::prepare`](crate::Compactor::prepare) refused. `E` is the store's
/// error ([`RecordError`] for a [`History`](crate::History),
/// [`JournalError`](crate::journal::JournalError) for a journal).
///
/// ```
/// use favur_context::compact::PrepareError;
/// use favur_context::{strict, Compactor, History, Policy};
/// let mut h = History::new();
/// h.append(strict!(user: "{}", "word ".repeat(400)));
/// let err = Compactor::new(Policy::for_window(1_000).unwrap()).prepare(&mut h).unwrap_err();
/// assert!(matches!(err, PrepareError::Limit(_)));
/// assert!(err.to_string().contains("limit of 500 tokens"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PrepareError<E = RecordError> {
    /// The request would carry the limit or more even after compaction. What was
    /// compacted stays recorded ([`Compactor::last_report`](crate::Compactor::last_report)).
    #[error(transparent)]
    Limit(LimitExceeded),
    /// The store did not record the compaction; nothing changed.
    #[error("the store did not record the compaction: {0}")]
    Store(#[source] E),
}

impl<E> PrepareError<E> {
    /// The limit refusal, if that is what this is.
    pub fn limit(&self) -> Option<&LimitExceeded> {
        match self {
            PrepareError::Limit(l) => Some(l),
            PrepareError::Store(_) => None,
        }
    }
}
