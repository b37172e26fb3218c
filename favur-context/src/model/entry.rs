//! Entries: what a history stores for each appended message, summary or pinned message.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::entry_kind::Kind;
use crate::model::message::Message;
use crate::model::retention::Retention;
use crate::model::site::{CallSite, Site};

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

/// How an entry came to be in the history.
///
/// ```
/// use favur_context::{EntryId, EntryKind};
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
    ///
    /// ```
    /// assert!(!favur_context::EntryKind::Appended.is_summary());
    /// ```
    pub fn is_summary(&self) -> bool {
        matches!(self, EntryKind::Summary { .. })
    }
}

/// One recorded message with everything compaction and tracing need: id, class, token
/// count (computed once, when recorded), the call site that classified it, and the message.
///
/// ```
/// use favur_context::{strict, History, Retention};
/// let mut history = History::new();
/// let id = history.append(strict!(user: "fix the failing test"));
/// let entry = history.recall(id).unwrap();
/// assert_eq!(entry.retention(), Retention::Strict);
/// assert!(entry.tokens() > 0);
/// assert_eq!(entry.site().line(), line!() - 4);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub(crate) id: EntryId,
    pub(crate) retention: Retention,
    pub(crate) tokens: u32,
    pub(crate) site: Site,
    #[serde(default, skip_serializing_if = "is_appended")]
    pub(crate) kind: Kind,
    pub(crate) message: Message,
}

fn is_appended(kind: &Kind) -> bool {
    *kind == EntryKind::Appended
}

impl Entry {
    /// Builds an entry. Histories build their own; this is for compaction engines and
    /// stores that create summary entries.
    ///
    /// ```
    /// use favur_context::{CallSite, Entry, EntryId, EntryKind, Message, Retention};
    /// let e = Entry::new(EntryId(0), Retention::Fuzzy, 3, CallSite::new("x.rs", 1, 1), EntryKind::Appended, Message::user("hi"));
    /// assert_eq!(e.tokens(), 3); // as given...
    /// let mut h = favur_context::History::new();
    /// h.insert(e).unwrap();
    /// assert_eq!(h.entries()[0].tokens(), 1); // ...recounted when a history records it
    /// ```
    pub fn new(
        id: EntryId,
        retention: Retention,
        tokens: u32,
        site: CallSite,
        kind: EntryKind,
        message: Message,
    ) -> Self {
        Entry {
            id,
            retention,
            tokens,
            site: site.into(),
            kind: kind.into(),
            message,
        }
    }

    /// Its id.
    ///
    /// ```
    /// use favur_context::{forgettable, History};
    /// let mut h = History::new();
    /// let id = h.append(forgettable!(user: "x"));
    /// assert_eq!(h.recall(id).unwrap().id(), id);
    /// ```
    pub fn id(&self) -> EntryId {
        self.id
    }

    /// Its retention class.
    ///
    /// ```
    /// use favur_context::{fuzzy, History, Retention};
    /// let mut h = History::new();
    /// let id = h.append(fuzzy!(user: "x"));
    /// assert_eq!(h.recall(id).unwrap().retention(), Retention::Fuzzy);
    /// ```
    pub fn retention(&self) -> Retention {
        self.retention
    }

    /// Its token count (content only, not per-message framing), computed when recorded.
    ///
    /// ```
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// let id = h.append(fuzzy!(user: "some words here"));
    /// assert!(h.recall(id).unwrap().tokens() >= 3);
    /// ```
    pub fn tokens(&self) -> u32 {
        self.tokens
    }

    /// The call site that classified it.
    ///
    /// ```
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// let id = h.append(fuzzy!(user: "x"));
    /// assert_eq!(h.recall(id).unwrap().site().line(), line!() - 1);
    /// ```
    pub fn site(&self) -> &CallSite {
        &self.site
    }

    /// How it came to be recorded.
    ///
    /// ```
    /// use favur_context::{fuzzy, EntryKind, History};
    /// let mut h = History::new();
    /// let id = h.append(fuzzy!(user: "x"));
    /// assert_eq!(h.recall(id).unwrap().kind(), &EntryKind::Appended);
    /// ```
    pub fn kind(&self) -> &EntryKind {
        &self.kind
    }

    /// The message itself.
    ///
    /// ```
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// let id = h.append(fuzzy!(assistant: "on it"));
    /// assert_eq!(h.recall(id).unwrap().message().text(), "on it");
    /// ```
    pub fn message(&self) -> &Message {
        &self.message
    }
}
