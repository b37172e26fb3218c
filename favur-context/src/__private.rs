//! What the generated code of `favur-context-macros` names. Not public API: no stability
//! guarantee of any kind.

pub use crate::account::TokenCounter;
pub use crate::classify::{Classified, Classify};
pub use crate::history::History;
pub use crate::message::{Arguments, Message, Part, Role, ToolCall, ToolResult};
pub use crate::retention::Retention;
pub use crate::retention::class::{Class, Forgettable, Fuzzy, Strict};
pub use crate::site::CallSite;
pub use crate::tool::{AsyncTool, ClassifiedAsyncTool, ClassifiedTool, Tool};
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

/// A tool call id: a string. A trait of its own (rather than `Into<String>`) so that a
/// value of the wrong type is reported with a message saying what the macro expected.
#[diagnostic::on_unimplemented(
    message = "a tool call id must be a string, not `{Self}`",
    label = "expected a `&str` or `String` call id",
    note = "the id is the provider's id of the call, e.g. `\"call_1\"`; convert other values with `.to_string()`"
)]
pub trait CallId {
    /// The id as a `String`.
    fn into_call_id(self) -> String;
}

/// A tool name: a string.
#[diagnostic::on_unimplemented(
    message = "a tool name must be a string, not `{Self}`",
    label = "expected a `&str` or `String` tool name"
)]
pub trait ToolName {
    /// The name as a `String`.
    fn into_tool_name(self) -> String;
}

macro_rules! string_like {
    ($($t:ty),* $(,)?) => {$(
        impl CallId for $t {
            #[inline]
            fn into_call_id(self) -> String { self.into() }
        }
        impl ToolName for $t {
            #[inline]
            fn into_tool_name(self) -> String { self.into() }
        }
    )*};
}
string_like!(
    &str,
    String,
    &String,
    &mut str,
    Box<str>,
    ::std::borrow::Cow<'_, str>
);

/// The call id in `tool_result(id)`, `tool_error(id)`, `tool_call` and `tool_calls`.
#[inline]
pub fn call_id(id: impl CallId) -> String {
    id.into_call_id()
}

/// The tool name in `tool_call` and `tool_calls`.
#[inline]
pub fn tool_name(name: impl ToolName) -> String {
    name.into_tool_name()
}

/// What `tool_call` accepts as arguments.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the arguments of a tool call",
    label = "expected a `serde_json::Value` or a JSON string",
    note = "tool-call arguments are a `serde_json::Value` (e.g. from `serde_json::json!`) or the JSON text the model produced (`&str` or `String`, kept verbatim if it is not valid JSON)"
)]
pub trait IntoArguments {
    /// The arguments.
    fn into_arguments(self) -> Arguments;
}

impl IntoArguments for ::serde_json::Value {
    #[inline]
    fn into_arguments(self) -> Arguments {
        Arguments::Json(self)
    }
}
impl IntoArguments for Arguments {
    #[inline]
    fn into_arguments(self) -> Arguments {
        self
    }
}
impl IntoArguments for &str {
    #[inline]
    fn into_arguments(self) -> Arguments {
        Arguments::parse(self)
    }
}
impl IntoArguments for String {
    #[inline]
    fn into_arguments(self) -> Arguments {
        Arguments::parse(self)
    }
}
impl IntoArguments for &String {
    #[inline]
    fn into_arguments(self) -> Arguments {
        Arguments::parse(self.as_str())
    }
}

/// Tool-call arguments from a `serde_json::Value` or a JSON string.
#[inline]
pub fn arguments(value: impl IntoArguments) -> Arguments {
    value.into_arguments()
}

/// A history parameter inside a `#[retention(C)]` function: `append` and `pin` take plain
/// content and classify it with `C`; everything else derefs to the [`History`] (pass it on
/// as `&mut history`).
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

    /// Appends plain content (text or a [`Message`]) with the function's class, or a value
    /// that has a class of its own with that class.
    #[track_caller]
    pub fn append<M: FnAppend>(&mut self, content: M) -> EntryId {
        let classified = content.classify_as(C::RETENTION, CallSite::caller());
        self.history.append(classified)
    }

    /// Pins plain content (a system prompt) with the function's class, like `append`.
    #[track_caller]
    pub fn pin<M: FnAppend>(&mut self, content: M) -> EntryId {
        let classified = content.classify_as(C::RETENTION, CallSite::caller());
        self.history.pin(classified)
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
    label = "expected text, a `Message`, or a value with a class of its own",
    note = "inside a `#[retention(...)]` function, `append` takes `&str`, `String` or `Message` (classified with the function's class), or a value that has its own class (a constructor macro's result, a type marked `#[retention(...)]`)"
)]
pub trait FnAppend {
    /// Classifies the value with `retention` unless it carries its own class.
    fn classify_as(self, retention: Retention, site: CallSite) -> Classified;
}

// Plain content takes the function's class. (These types do not implement `Classify`, and
// nothing else can implement it for them, so they do not overlap the impl below.)
impl FnAppend for &str {
    #[inline]
    fn classify_as(self, retention: Retention, site: CallSite) -> Classified {
        Classified::with_site(Message::user(self), retention, site)
    }
}

impl FnAppend for String {
    #[inline]
    fn classify_as(self, retention: Retention, site: CallSite) -> Classified {
        Classified::with_site(Message::user(self), retention, site)
    }
}

impl FnAppend for &String {
    #[inline]
    fn classify_as(self, retention: Retention, site: CallSite) -> Classified {
        Classified::with_site(Message::user(self.as_str()), retention, site)
    }
}

impl FnAppend for Message {
    #[inline]
    fn classify_as(self, retention: Retention, site: CallSite) -> Classified {
        Classified::with_site(self, retention, site)
    }
}

// A value with a class of its own (a macro's result, a type marked `#[retention(...)]`, a
// generic `T: Classify`) keeps it. `do_not_recommend`: an unsupported value is reported
// with `FnAppend`'s message, not as a missing `Classify`.
#[diagnostic::do_not_recommend]
impl<T: Classify> FnAppend for T {
    #[inline]
    fn classify_as(self, _retention: Retention, site: CallSite) -> Classified {
        self.into_classified(site)
    }
}

/// A value that converts into a [`Message`]: what `message: expr` and the types marked
/// `#[retention(...)]` need. The blanket impl is `do_not_recommend`, so a missing conversion
/// is reported with this trait's message rather than as an unsatisfied `From` bound.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not convert into a `Message`",
    label = "expected a `Message` or a type with `impl From<{Self}> for Message`",
    note = "a classified type, and the value of `message: ...`, must convert into a `Message`: add `impl From<{Self}> for favur_context::Message`",
    note = "for plain text use `user: \"...\"`, `assistant: \"...\"` or `system: \"...\"`"
)]
pub trait IntoMessage {
    /// The message.
    fn into_message(self) -> Message;
}

#[diagnostic::do_not_recommend]
impl<T: Into<Message>> IntoMessage for T {
    #[inline]
    fn into_message(self) -> Message {
        self.into()
    }
}

/// The message in `message: expr`, or of a value of a classified type.
#[inline]
pub fn into_message(message: impl IntoMessage) -> Message {
    message.into_message()
}
