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
