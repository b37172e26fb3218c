//! Entries: what a history stores for each appended message, summary or pinned message.

use serde::{Deserialize, Serialize};

pub use crate::model::entry_id::EntryId;
pub use crate::model::entry_kind::EntryKind;
use crate::model::entry_kind::Kind;
use crate::model::message::Message;
use crate::model::retention::Retention;
use crate::model::site::{CallSite, Site};

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
    /// use favur_context::message::{CallSite, EntryKind};
    /// use favur_context::{Entry, EntryId, Message, Retention};
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
    /// use favur_context::message::EntryKind;
    /// use favur_context::{fuzzy, History};
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
