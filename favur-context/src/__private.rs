//! What the generated code of `favur-context-macros` names. Not public API: no stability
//! guarantee of any kind.

pub use crate::history::History;
pub use crate::history::NewEntry;
pub use crate::model::classify::{Classified, Classify};
pub use crate::model::message::{Arguments, Message, Part, Role, ToolCall, ToolResult};
pub use crate::model::retention::Retention;
pub use crate::model::retention::class::{Class, Forgettable, Fuzzy, Strict};
pub use crate::model::site::CallSite;
pub use crate::model::tool::{AsyncTool, ClassifiedAsyncTool, ClassifiedTool, Tool};
use crate::store_trait::Store;
pub use crate::tokens::counter::TokenCounter;
pub use ::core;
pub use ::std::format;
pub use favur_context_macros::message;

use crate::journal::{JournalError, JournaledHistory};
use crate::model::entry::EntryId;

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

/// What `tool_calls: expr` accepts: any `IntoIterator<Item = ToolCall>`. A trait of its own
/// so that a value of the wrong type is reported with a message saying what is expected.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a list of tool calls",
    label = "expected an iterable of `ToolCall`s",
    note = "`tool_calls:` takes a literal list `[(id, name, args), ...]` or an expression whose value is an `IntoIterator<Item = ToolCall>` (a `Vec<ToolCall>`, an array of `ToolCall`s, the calls of a parsed reply)",
    note = "for borrowed calls (`&[ToolCall]`, `&Vec<ToolCall>`), pass `calls.iter().cloned()`"
)]
pub trait IntoToolCalls {
    /// The calls.
    type Calls: Iterator<Item = ToolCall>;
    /// The calls, in order.
    fn into_tool_calls(self) -> Self::Calls;
}

#[diagnostic::do_not_recommend]
impl<I: IntoIterator<Item = ToolCall>> IntoToolCalls for I {
    type Calls = I::IntoIter;
    #[inline]
    fn into_tool_calls(self) -> I::IntoIter {
        self.into_iter()
    }
}

/// The assistant message of `tool_calls: expr`. (Builds the message itself, so a value that
/// is not a list of calls is one error, at the user's expression.)
#[inline]
pub fn tool_calls<I: IntoToolCalls>(calls: I) -> Message {
    Message::assistant_calls(calls.into_tool_calls())
}

// ---- `#[retention(C)]` on a function ----------------------------------------------------
//
// The attribute does not wrap or shadow the function's parameters: it rewrites, in the
// body, each method call `p.append(x)` / `p.pin(x)` whose receiver `p` is a history
// parameter, into one of two calls (see `favur-context-macros/src/body.rs`):
//
// - `append(C, p, x)` / `pin(C, p, x)` when `p` is declared with a concrete
//   type (`&mut History`, `&mut JournaledHistory`, an alias...): dispatched through
//   `AppendTo` / `PinTo`, so a parameter that is not a history is reported as such;
// - `p.append(with_class(C, x))` when the macro cannot see the receiver's type
//   (`self`, a generic `&mut H`, `&mut impl Trait`, a field `self.history`): the receiver's
//   own `append` is called with the content already classified, so anything whose `append`
//   takes a classified value works (an extension-trait impl on a history, a wrapper that
//   holds or derefs to one, a history generic over a store trait).
//
// The class is passed as a value (a unit struct), not in a turbofish: with explicit generic
// arguments rustc would blame an unsatisfied bound on the `_` written there (at the user's
// `append`) instead of on the argument (the receiver, or the content). The result is a
// parameter `O` bound by `Output = O` rather than the projection `H::Output`, so a receiver
// that is not a history is one error (at the receiver), not a second one for the projection.

/// A history that `p.append(x)` can append to inside a `#[retention(...)]` function.
///
/// `Output` is what the history's own `append` returns: an [`EntryId`] for [`History`], a
/// `Result<EntryId, JournalError>` for [`JournaledHistory`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a history, so `append` on it cannot take plain content",
    label = "this parameter is not a `History` or a `JournaledHistory`",
    note = "inside a `#[retention(...)]` function, `p.append(...)` and `p.pin(...)` classify plain content when `p` is a history parameter: `&mut History`, `&mut JournaledHistory`, an alias of one, `&mut self`, or a generic `&mut H` whose `append` takes a classified value",
    note = "to call this type's own `append`, use a path call such as `Vec::append(list, &mut other)`; to append to a history inside it, append a classified value (`strict!(user: \"...\")`)"
)]
pub trait AppendTo {
    /// What the history's own `append` returns.
    type Output;
    /// Appends an already classified message.
    #[track_caller]
    fn append_classified(&mut self, message: Classified) -> Self::Output;
}

/// A history that `p.pin(x)` can pin to inside a `#[retention(...)]` function.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a history that can pin, so `pin` on it cannot take plain content",
    label = "`pin` takes plain content only on a `History` or a `JournaledHistory`",
    note = "inside a `#[retention(...)]` function, `p.pin(...)` classifies plain content when `p` is `&mut History`, `&mut JournaledHistory`, an alias of one, `&mut self`, or a generic `&mut H` whose `pin` takes a classified value"
)]
pub trait PinTo {
    /// What the history's own `pin` returns.
    type Output;
    /// Pins an already classified message.
    #[track_caller]
    fn pin_classified(&mut self, message: Classified) -> Self::Output;
}

// One impl per history. Once a public store trait implemented by both histories exists,
// these can become `impl<S: Store + ?Sized> AppendTo for S` (and the same for `PinTo`); a
// generic `&mut H` bounded by that trait already works through `with_class` (the receiver's
// own `append`), whatever its `append` accepts, as long as it takes a `Classified`.
impl AppendTo for History {
    type Output = EntryId;
    #[inline]
    #[track_caller]
    fn append_classified(&mut self, message: Classified) -> EntryId {
        self.append(message)
    }
}

impl PinTo for History {
    type Output = EntryId;
    #[inline]
    #[track_caller]
    fn pin_classified(&mut self, message: Classified) -> EntryId {
        self.pin(message)
    }
}

impl AppendTo for JournaledHistory {
    type Output = Result<EntryId, JournalError>;
    #[inline]
    #[track_caller]
    fn append_classified(&mut self, message: Classified) -> Self::Output {
        self.append(message)
    }
}

impl PinTo for JournaledHistory {
    type Output = Result<EntryId, JournalError>;
    #[inline]
    #[track_caller]
    fn pin_classified(&mut self, message: Classified) -> Self::Output {
        self.pin(message)
    }
}

/// `history.append(content)` inside a `#[retention(C)]` function, for a history parameter
/// of a concrete type: `content` is classified with `C` (unless it has a class of its own)
/// at the caller's location, the user's `append` call.
#[inline]
#[track_caller]
pub fn append<C: Class, H: AppendTo<Output = O> + ?Sized, M: FnAppend, O>(
    _class: C,
    history: &mut H,
    content: M,
) -> O {
    history.append_classified(content.classify_as(C::RETENTION, CallSite::caller()))
}

/// `history.pin(content)` inside a `#[retention(C)]` function; see [`append`].
#[inline]
#[track_caller]
pub fn pin<C: Class, H: PinTo<Output = O> + ?Sized, M: FnAppend, O>(
    _class: C,
    history: &mut H,
    content: M,
) -> O {
    history.pin_classified(content.classify_as(C::RETENTION, CallSite::caller()))
}

/// The argument of `receiver.append(content)` inside a `#[retention(C)]` function when the
/// receiver's type is not visible to the macro (`self`, a generic `&mut H`): `content`
/// classified with `C` (unless it has a class of its own) at the user's `append` call.
#[inline]
#[track_caller]
pub fn with_class<C: Class, M: FnAppend>(_class: C, content: M) -> Classified {
    content.classify_as(C::RETENTION, CallSite::caller())
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
