//! What the generated code of `favur-context-macros` names. Not public API: no stability
//! guarantee of any kind.

pub use crate::account::TokenCounter;
pub use crate::classify::{Classified, Classify};
pub use crate::history::History;
pub use crate::message::{Arguments, Message, Part, Role, ToolCall, ToolResult};
pub use crate::retention::Retention;
pub use crate::retention::class::{Class, Forgettable, Fuzzy, Strict};
pub use crate::site::CallSite;
pub use crate::tool::{ClassifiedTool, Tool};
pub use ::core;
pub use ::std::format;
pub use favur_context_macros::message;

use crate::entry::EntryId;

/// Classifies `message` with the compile-time class `C`.
#[inline]
pub fn classify<C: Class>(message: Message, site: CallSite) -> Classified {
    Classified::with_site(message, C::RETENTION, site)
}

/// The call site of a macro invocation.
#[inline]
pub const fn site(file: &'static str, line: u32, column: u32) -> CallSite {
    CallSite::new(file, line, column)
}

/// Tool-call arguments from a `serde_json::Value` or a JSON string.
#[inline]
pub fn arguments(value: impl Into<Arguments>) -> Arguments {
    value.into()
}

/// Plain content accepted inside a `#[retention(...)]` function.
pub trait Content {
    /// The message this content becomes.
    fn into_message(self) -> Message;
}

impl Content for &str {
    fn into_message(self) -> Message {
        Message::user(self)
    }
}
impl Content for String {
    fn into_message(self) -> Message {
        Message::user(self)
    }
}
impl Content for &String {
    fn into_message(self) -> Message {
        Message::user(self.as_str())
    }
}
impl Content for Message {
    fn into_message(self) -> Message {
        self
    }
}

/// A history parameter inside a `#[retention(C)]` function: `append` takes plain content
/// and classifies it with `C`; everything else derefs to the [`History`].
pub struct ClassedHistory<'a, C: Class> {
    history: &'a mut History,
    _class: core::marker::PhantomData<C>,
}

impl<'a, C: Class> ClassedHistory<'a, C> {
    /// Wraps the function's history parameter.
    #[inline]
    pub fn new(history: &'a mut History) -> Self {
        ClassedHistory {
            history,
            _class: core::marker::PhantomData,
        }
    }

    /// Appends plain content (text or a [`Message`]) with the function's class, or an
    /// already classified value with its own class.
    #[track_caller]
    pub fn append<M: FnAppend>(&mut self, content: M) -> EntryId {
        let classified = content.classify_as(C::RETENTION, CallSite::caller());
        self.history.append(classified)
    }
}

impl<C: Class> core::ops::Deref for ClassedHistory<'_, C> {
    type Target = History;
    fn deref(&self) -> &History {
        self.history
    }
}

impl<C: Class> core::ops::DerefMut for ClassedHistory<'_, C> {
    fn deref_mut(&mut self) -> &mut History {
        self.history
    }
}

/// What `append` accepts inside a `#[retention(...)]` function.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be appended here",
    label = "expected text, a `Message`, or a classified value",
    note = "inside a `#[retention(...)]` function, `append` takes `&str`, `String`, `Message` (classified with the function's class) or a value that already has a class"
)]
pub trait FnAppend {
    /// Classifies the value with `retention` unless it carries its own class.
    fn classify_as(self, retention: Retention, site: CallSite) -> Classified;
}

impl<T: Content> FnAppend for T {
    fn classify_as(self, retention: Retention, site: CallSite) -> Classified {
        Classified::with_site(self.into_message(), retention, site)
    }
}

impl FnAppend for Classified {
    fn classify_as(self, _retention: Retention, _site: CallSite) -> Classified {
        self
    }
}
