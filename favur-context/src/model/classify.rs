//! Classified values: a message together with the retention class its call site chose.

use crate::model::message::Message;
use crate::model::retention::Retention;
use crate::model::site::CallSite;

/// A message with its retention class and the call site that classified it: the only
/// thing a [`History`](crate::History) accepts.
///
/// Build one with the constructor macros ([`strict!`](crate::strict),
/// [`fuzzy!`](crate::fuzzy), [`forgettable!`](crate::forgettable)), or, on data-driven
/// paths, by naming a class explicitly with [`Message::classify`].
///
/// ```
/// use favur_context::{Message, Retention};
/// let c = Message::user("the plan: ...").classify(Retention::Strict);
/// assert_eq!(c.retention(), Retention::Strict);
/// assert_eq!(c.site().line(), line!() - 2);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Classified {
    message: Message,
    retention: Retention,
    site: CallSite,
}

impl Classified {
    /// The message.
    pub fn message(&self) -> &Message {
        &self.message
    }

    /// The class chosen for it.
    pub fn retention(&self) -> Retention {
        self.retention
    }

    /// Where it was classified.
    ///
    /// ```
    /// use favur_context::{Message, Retention};
    /// let c = Message::user("x").classify(Retention::Fuzzy);
    /// assert!(c.site().file().ends_with(".rs"));
    /// ```
    pub fn site(&self) -> &CallSite {
        &self.site
    }

    /// Gives the message a *supersession key*: what it is a copy of (a file's path for a
    /// view or an edit of that file, the command for a test run). When a later entry
    /// carries the same key, this one is superseded: compaction takes it before any
    /// current material of its class (see [`Policy::target`](crate::Policy::target)).
    /// The key is stored with the message (the [`KEY_EXTENSION`] extension) and never
    /// sent to a provider.
    ///
    /// ```
    /// use favur_context::message::KEY_EXTENSION;
    /// use favur_context::fuzzy;
    /// let view = fuzzy!(tool_result("c1"): "fn main() {{}}").with_key("src/main.rs");
    /// assert_eq!(view.key(), Some("src/main.rs"));
    /// assert_eq!(view.message().extensions[KEY_EXTENSION], "src/main.rs");
    /// ```
    pub fn with_key(mut self, key: impl Into<String>) -> Self {
        self.message.extensions.insert(
            KEY_EXTENSION.to_owned(),
            serde_json::Value::String(key.into()),
        );
        self
    }

    /// The supersession key given with [`with_key`](Classified::with_key), if any.
    pub fn key(&self) -> Option<&str> {
        key_of(&self.message)
    }

    /// Says the message shows only `part` of what its [key](Classified::with_key) names
    /// (a view of some lines of a file). A part is superseded only by a later whole copy
    /// (the same key with no part: a view of the whole file, an edit of it) or by a later
    /// part whose lines cover it, and it supersedes only an earlier part it covers: a
    /// view of lines 610 to 620 does not take the place of a view of the whole file.
    /// Stored with the message (the [`KEY_PART_EXTENSION`] extension), never sent.
    ///
    /// ```
    /// use favur_context::message::KeyPart;
    /// use favur_context::strict;
    /// let view = strict!(tool_result("c1"): "...").with_key("src/a.py").with_key_part(KeyPart::Lines(10, 40));
    /// assert_eq!(view.key_part(), Some(KeyPart::Lines(10, 40)));
    /// assert!(KeyPart::Lines(1, 100).covers(KeyPart::Lines(10, 40)));
    /// ```
    pub fn with_key_part(mut self, part: KeyPart) -> Self {
        self.message.extensions.insert(
            KEY_PART_EXTENSION.to_owned(),
            serde_json::Value::String(part.to_string()),
        );
        self
    }

    /// The part given with [`with_key_part`](Classified::with_key_part), if any.
    pub fn key_part(&self) -> Option<KeyPart> {
        key_part_of(&self.message)
    }

    /// Splits it into its parts.
    pub fn into_parts(self) -> (Message, Retention, CallSite) {
        (self.message, self.retention, self.site)
    }

    /// Classifies `message` with `retention`, recording `site`. Used by the macros and by
    /// importers that record where a message came from.
    ///
    /// ```
    /// use favur_context::message::CallSite;
    /// use favur_context::{Classified, Message, Retention};
    /// let c = Classified::with_site(Message::user("x"), Retention::Fuzzy, CallSite::new("import", 1, 1));
    /// assert_eq!(c.site().file(), "import");
    /// ```
    pub fn with_site(message: Message, retention: Retention, site: CallSite) -> Self {
        Classified {
            message,
            retention,
            site,
        }
    }
}

/// The message extension that holds a [supersession key](Classified::with_key). Like
/// every `favur_` extension it is the engine's: kept in the records, never rendered.
pub const KEY_EXTENSION: &str = "favur_key";

/// The supersession key of `message`, if it has one.
pub(crate) fn key_of(message: &Message) -> Option<&str> {
    message.extensions.get(KEY_EXTENSION)?.as_str()
}

/// The message extension that holds a [key part](Classified::with_key_part).
pub const KEY_PART_EXTENSION: &str = "favur_key_part";

/// The part of what a [supersession key](Classified::with_key) names that a message
/// shows: some lines, or a part not known (the tail of a file, the lines a filter let
/// through). With no part, a message is a whole copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyPart {
    /// Lines `first..=last`, numbered from 1 (`first <= last`: a reversed range is
    /// stored as given and read back as [`Unknown`](KeyPart::Unknown)).
    Lines(u64, u64),
    /// Some part, not known which: covered by nothing but a whole copy.
    Unknown,
}

impl KeyPart {
    /// Whether every line of `other` is in `self`.
    pub fn covers(self, other: KeyPart) -> bool {
        match (self, other) {
            (KeyPart::Lines(a, b), KeyPart::Lines(c, d)) => a <= c && d <= b,
            _ => false,
        }
    }
}

impl std::fmt::Display for KeyPart {
    /// `lines A-B`, or `part`: the form the extension stores.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyPart::Lines(a, b) => write!(f, "lines {a}-{b}"),
            KeyPart::Unknown => f.write_str("part"),
        }
    }
}

impl std::str::FromStr for KeyPart {
    type Err = ParseKeyPartError;

    /// Reads what [`Display`](std::fmt::Display) writes.
    ///
    /// ```
    /// use favur_context::message::KeyPart;
    /// assert_eq!("lines 3-9".parse(), Ok(KeyPart::Lines(3, 9)));
    /// assert_eq!("part".parse(), Ok(KeyPart::Unknown));
    /// assert!("lines 9-3".parse::<KeyPart>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "part" {
            return Ok(KeyPart::Unknown);
        }
        let lines = s.strip_prefix("lines ").and_then(|r| r.split_once('-'));
        match lines.map(|(a, b)| (a.parse::<u64>(), b.parse::<u64>())) {
            Some((Ok(a), Ok(b))) if a <= b => Ok(KeyPart::Lines(a, b)),
            _ => Err(ParseKeyPartError(s.to_owned())),
        }
    }
}

/// A [`KEY_PART_EXTENSION`] value that is neither `lines A-B` (A ≤ B) nor `part`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a key part: {0:?} (expected `lines A-B` with A <= B, or `part`)")]
pub struct ParseKeyPartError(pub String);

/// The key part of `message`: `None` for a whole copy. A value that does not parse
/// (edited records) counts as an unknown part, which supersedes nothing.
pub(crate) fn key_part_of(message: &Message) -> Option<KeyPart> {
    let v = message.extensions.get(KEY_PART_EXTENSION)?;
    Some(
        v.as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or(KeyPart::Unknown),
    )
}

impl Message {
    /// Classifies this message with a class chosen at run time, recording the caller as
    /// its call site. The class must be named: there is no default.
    ///
    /// ```
    /// use favur_context::{History, Message, Retention};
    /// let class = if true { Retention::Forgettable } else { Retention::Strict };
    /// let mut history = History::new();
    /// history.append(Message::user("ls output").classify(class));
    /// assert_eq!(history.entries()[0].retention(), Retention::Forgettable);
    /// ```
    #[track_caller]
    pub fn classify(self, retention: Retention) -> Classified {
        Classified {
            message: self,
            retention,
            site: CallSite::caller(),
        }
    }
}

/// A value that carries a retention class and can therefore be appended to a history.
///
/// Implemented by [`Classified`] (what the macros build) and by every type marked
/// `#[retention(...)]`. Plain text and unclassified messages do not implement it, so
/// appending them is a compile error.
///
/// ```
/// use favur_context::message::CallSite;
/// use favur_context::{strict, Classify};
/// let c = strict!(user: "keep me").into_classified(CallSite::caller());
/// assert_eq!(c.retention(), favur_context::Retention::Strict);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no retention class",
    label = "this value has no retention class, so it cannot be appended",
    note = "every appended message needs one of the three classes: `forgettable`, `fuzzy` or `strict`",
    note = "give it one with a constructor macro: `strict!(user: \"...\")`, `fuzzy!(tool_result(id): \"...\")`, `forgettable!(message: msg)`",
    note = "or mark its type or the appending function with `#[retention(strict)]`, or name a class at run time with `Message::classify(Retention::Strict)`"
)]
pub trait Classify {
    /// Turns the value into a [`Classified`] message. `site` is the location of the append
    /// call, used when the value did not record a site of its own.
    fn into_classified(self, site: CallSite) -> Classified;
}

impl Classify for Classified {
    fn into_classified(self, _site: CallSite) -> Classified {
        self
    }
}
