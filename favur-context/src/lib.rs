//! Conversation history for long-running LLM agents, where every message carries a
//! **retention class** chosen by the code that appends it.
//!
//! Compaction that looks at a history only when the context window is full knows the
//! least it will ever know: every message is just text with a length and an age. The code
//! that appends a message knows *why* it is recording it. favur-context moves the
//! judgement there: each append names one of three classes, and compaction later reads
//! nothing but those classes.
//!
//! # The three classes
//!
//! | class | ask at the call site | examples |
//! |---|---|---|
//! | [`forgettable`](Retention::Forgettable) | "Once the model has read this, is it spent?" | a directory listing, search hits |
//! | [`fuzzy`](Retention::Fuzzy) | "Later on, would the gist do?" | a file view, an intermediate step |
//! | [`strict`](Retention::Strict) | "Will the exact text matter until the end?" | a stack trace, the plan, a directive a person typed, the agent's progress journal |
//!
//! When in doubt between two classes, pick the stricter one: a wrong `strict` costs
//! tokens, a wrong `forgettable` costs a re-run of whatever produced the text.
//!
//! # An unclassified append does not compile
//!
//! [`History::append`] takes only values that carry a class ([`Classify`]). Text, a
//! `String` or a bare [`Message`] are rejected at compile time with a message that names
//! the classes and the ways to give one:
//!
//! ```compile_fail
//! let mut history = favur_context::History::new();
//! history.append("some text"); // error[E0277]: `&str` has no retention class
//! ```
//!
//! There are three ways in, and no default class anywhere.
//!
//! ## 1. Constructor macros: [`strict!`], [`fuzzy!`], [`forgettable!`]
//!
//! One macro per class, `format!`-style, for every role and part. Each records its call
//! site (file, line, column) so any entry can be traced to the line that classified it.
//!
//! ```
//! use favur_context::{forgettable, fuzzy, strict, History};
//! use serde_json::json;
//!
//! let mut history = History::new();
//! history.pin(strict!(system: "You are a careful coding agent."));
//! history.append(strict!(user: "Make `{}` pass.", "tests/parse.rs"));
//! history.append(strict!(tool_call: "c1", "bash", json!({"command": "ls src"})));
//! history.append(forgettable!(tool_result("c1"): "lib.rs\nparse.rs"));
//! history.append(fuzzy!(tool_calls: [("c2", "bash", json!({"command": "cat src/parse.rs"}))]));
//! history.append(fuzzy!(tool_result("c2"): "pub fn parse() {{ todo!() }}"));
//! history.append(strict!(tool_error("c3"): "thread 'main' panicked at src/parse.rs:3:5"));
//! assert_eq!(history.len(), 7);
//! ```
//!
//! ## 2. The `#[retention(class)]` attribute
//!
//! On a **type** that converts into a [`Message`], the type itself becomes classified:
//!
//! ```
//! use favur_context::{retention, History, Message, Retention};
//!
//! #[retention(strict)]
//! struct StackTrace(String);
//!
//! impl From<StackTrace> for Message {
//!     fn from(t: StackTrace) -> Message { Message::user(t.0) }
//! }
//!
//! let mut history = History::new();
//! let id = history.append(StackTrace("Traceback (most recent call last): ...".into()));
//! assert_eq!(history.entry(id).unwrap().retention(), Retention::Strict);
//! ```
//!
//! On a **function or method**, its `&mut History` parameters accept plain content inside
//! its body, appended with that class (outside such a function plain content is still a
//! compile error):
//!
//! ```
//! use favur_context::{retention, History, Retention};
//!
//! #[retention(forgettable)]
//! fn record_listing(history: &mut History, listing: &str) {
//!     history.append(listing);
//! }
//!
//! let mut history = History::new();
//! record_listing(&mut history, "Cargo.toml\nsrc/");
//! assert_eq!(history.entries()[0].retention(), Retention::Forgettable);
//! ```
//!
//! On a **tool** (`impl Tool for T`), every result the tool produces is appended with the
//! tool's class through [`History::run_tool`] / [`History::append_tool_result`].
//!
//! ## 3. Explicit runtime classification
//!
//! Data-driven paths name a [`Retention`] value with [`Message::classify`]:
//!
//! ```
//! use favur_context::{History, Message, Retention};
//! let class: Retention = "fuzzy".parse().unwrap();
//! let mut history = History::new();
//! history.append(Message::assistant("thinking...").classify(class));
//! ```
//!
//! # Ready-made kinds
//!
//! [`kinds::Directive`] (a directive injected into a running agent) and
//! [`kinds::ProgressNote`] (the agent's progress journal) are both strict, and are
//! classified with the same attribute.
//!
//! # The history and its view
//!
//! The history records every entry and never edits it. What the model is shown is the
//! [`View`], derived from the history by recorded [`Compaction`]s: entries leave the view
//! or are replaced by summaries there, but their originals stay retrievable by id with
//! [`History::recall`]. [`History`] is `Send + Sync`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// Lets the macros' absolute `::favur_context::...` paths resolve inside this crate too.
extern crate self as favur_context;

mod account;
mod classify;
mod compact;
mod entry;
mod forms;
mod history;
mod journal;
mod message;
mod plan;
mod policy;
mod recall;
mod retention;
mod site;
mod summarize;
mod tool;
mod view;

pub mod import;
#[cfg(feature = "async-openai")]
pub mod interop;
pub mod render;
pub mod validate;

pub mod kinds;
pub mod rules;

pub use account::{HeuristicCounter, TokenCounter};
pub use classify::{Classified, Classify};
pub use compact::{
    CommitError, CompactingHistory, CompactionReport, Compactor, Fallback, LimitExceeded,
    summary_message,
};
pub use entry::{Entry, EntryId, EntryKind};
pub use forms::placeholder_text;
pub use history::{DEFAULT_FRAMING_TOKENS, History, LoadError};
pub use journal::{
    Corruption, DEFAULT_MAX_LINE_BYTES, Durability, JOURNAL_FORMAT, JournalError, JournaledHistory,
    OpenOptions, OpenReport, RecallError, Salvaged, TornTail,
};
pub use message::{Arguments, Message, Part, Role, ToolCall, ToolResult};
pub use plan::{ByClass, ClassOutcome, Figures, Plan, PlannedReform, Run};
pub use policy::{
    Action, DEFAULT_MIN_RECLAIM, DEFAULT_SUMMARY_BUDGET_TOKENS, DEFAULT_WINDOW_TOKENS, Policy,
    PolicyBuilder, PolicyError, Tier,
};
pub use recall::{RecallSource, RecallTool};
pub use retention::{ParseRetentionError, Retention, class};
pub use site::CallSite;
pub use summarize::{
    AsyncSummarizer, BuiltinSummarizer, Ready, SummarizeError, Summarizer, SummaryRequest,
};
pub use tool::{ClassifiedTool, Tool};
pub use view::{ApplyError, Compaction, Edit, Form, View, ViewItem};

/// Gives an item a retention class: `#[retention(forgettable)]`, `#[retention(fuzzy)]` or
/// `#[retention(strict)]`. See also the [crate docs](crate#2-the-retentionclass-attribute).
///
/// It goes on three kinds of items:
///
/// **A struct or enum that converts into a [`Message`]** (it needs `impl From<T> for
/// Message`): the type implements [`Classify`], so its values can be appended as they are.
/// Their call site is the `append` call. Generic types are classified for the parameters
/// the conversion accepts.
///
/// ```
/// use favur_context::{retention, History, Message, Retention};
///
/// #[retention(forgettable)]
/// struct Listing(Vec<String>);
///
/// impl From<Listing> for Message {
///     fn from(l: Listing) -> Message { Message::tool_result("ls", l.0.join("\n"), false) }
/// }
///
/// let mut history = History::new();
/// let id = history.append(Listing(vec!["Cargo.toml".into(), "src/".into()]));
/// assert_eq!(history.entry(id).unwrap().retention(), Retention::Forgettable);
/// ```
///
/// **A function or method with `&mut History` parameters** (free, generic, `async`, with
/// `&mut self`, any path ending in `History`): inside the body, `append` and `pin` on those
/// parameters take plain content (`&str`, `String`, `&String`, [`Message`]) and classify it
/// with the function's class; values that have a class of their own keep it. The call site
/// is the `append` line. Everything else of [`History`] is available as usual, and the
/// history can be passed on as `&mut history`. Outside such a function, plain content is
/// still a compile error.
///
/// ```
/// use favur_context::{retention, History, Retention};
///
/// #[retention(strict)]
/// fn record_failure(history: &mut History, trace: &str) {
///     history.append(format!("cargo test failed:\n{trace}"));
/// }
///
/// let mut history = History::new();
/// record_failure(&mut history, "thread 'main' panicked at src/lib.rs:3:5");
/// assert_eq!(history.entries()[0].retention(), Retention::Strict);
/// ```
///
/// **An `impl Tool for T` block**: the tool implements [`ClassifiedTool`], and every result
/// appended with [`History::run_tool`] or [`History::append_tool_result`] has its class.
///
/// ```
/// use favur_context::{retention, History, Retention, Tool, ToolCall};
/// use serde_json::{json, Value};
///
/// struct ReadFile;
///
/// #[retention(fuzzy)]
/// impl Tool for ReadFile {
///     fn name(&self) -> &str { "read_file" }
///     fn description(&self) -> &str { "Show a file" }
///     fn parameters(&self) -> Value { json!({"type": "object"}) }
///     fn call(&self, _: &Value) -> Result<String, String> { Ok("fn main() {}".into()) }
/// }
///
/// let mut history = History::new();
/// let id = history.run_tool(&ReadFile, &ToolCall::new("c1", "read_file", json!({})));
/// assert_eq!(history.entry(id).unwrap().retention(), Retention::Fuzzy);
/// ```
///
/// Anything else is a compile error spanned at the offending token and naming the valid
/// classes: a misspelled class (`stric`: did you mean `strict`?), a missing class, two
/// classes, an argument that is not a class name (`"strict"`, `class = strict`, a path),
/// or an unsupported item (a const, a module, a trait, an inherent impl, an impl of another
/// trait, a function without a `&mut History` parameter). All errors of one attribute are
/// reported together, and the item is still emitted so no secondary errors follow.
///
/// ```compile_fail
/// #[favur_context::retention(stric)] // error: unknown retention class `stric` (did you mean `strict`?)
/// fn record(history: &mut favur_context::History) {
///     history.append("the plan");
/// }
/// ```
#[doc(inline)]
pub use favur_context_macros::retention;

/// Builds a [`Classified`] message with the [`Strict`](Retention::Strict) class: the exact
/// text is needed until the end (a stack trace, the plan, a directive).
///
/// Forms (each records its own call site: the file, line and column of the `strict!`
/// token):
///
/// | form | builds |
/// |---|---|
/// | `user: "fmt", args...` / `user: expr` | a user text message (`format!` syntax, or any `Display` value) |
/// | `assistant: ...`, `system: ...` | the same for the assistant and system roles |
/// | `tool_result(call_id): ...` | a tool message answering `call_id` |
/// | `tool_error(call_id): ...` | the same with the error flag set |
/// | `tool_call: id, name, args` | an assistant message with one tool call; `args` is a `serde_json::Value` or JSON text (kept raw if invalid) |
/// | `tool_calls: [(id, name, args), ...]` | an assistant message with several tool calls |
/// | `message: expr` | any value with `impl From<T> for Message` |
///
/// Mistakes are compile errors at the offending token: an unknown kind (with a
/// suggestion), a missing `:`, a wrong number of call elements, a call id that is not a
/// string, format arguments that do not match.
///
/// ```compile_fail
/// let m = favur_context::strict!(usr: "x"); // error: unknown message kind `usr` (did you mean `user`?)
/// ```
///
/// ```
/// use favur_context::{strict, Role};
/// let trace = "Traceback (most recent call last): ...";
/// let a = strict!(user: "Fix {} before {}", "the parser", "Friday");
/// let b = strict!(assistant: "Plan: 1. reproduce 2. fix");
/// let c = strict!(system: "You are a coding agent.");
/// let d = strict!(tool_result("call_1"): "{trace}");
/// let e = strict!(tool_error("call_2"): "exit status {}", 1);
/// let f = strict!(tool_call: "call_3", "bash", serde_json::json!({"command": "cargo test"}));
/// let g = strict!(tool_calls: [("c4", "read", r#"{"path":"a.rs"}"#), ("c5", "read", r#"{"path":"b.rs"}"#)]);
/// let h = strict!(message: favur_context::Message::user("an existing message"));
/// assert_eq!(a.message().text(), "Fix the parser before Friday");
/// assert_eq!(g.message().tool_calls().count(), 2);
/// assert_eq!(f.message().role, Role::Assistant);
/// ```
#[macro_export]
macro_rules! strict {
    ($($arg:tt)*) => { $crate::__private::message!($crate, Strict, $($arg)*) };
}

/// Builds a [`Classified`] message with the [`Fuzzy`](Retention::Fuzzy) class: the gist
/// matters, the details can go (a file view). Same forms as [`strict!`].
///
/// ```
/// use favur_context::{fuzzy, Retention};
/// let view = fuzzy!(tool_result("call_9"): "fn main() {{ println!(\"hi\") }}");
/// assert_eq!(view.retention(), Retention::Fuzzy);
/// ```
#[macro_export]
macro_rules! fuzzy {
    ($($arg:tt)*) => { $crate::__private::message!($crate, Fuzzy, $($arg)*) };
}

/// Builds a [`Classified`] message with the [`Forgettable`](Retention::Forgettable)
/// class: consumed once, then spent (a directory listing). Same forms as [`strict!`].
///
/// ```
/// use favur_context::{forgettable, Retention};
/// let listing = forgettable!(tool_result("call_2"): "Cargo.toml\nsrc/\ntests/");
/// assert_eq!(listing.retention(), Retention::Forgettable);
/// ```
#[macro_export]
macro_rules! forgettable {
    ($($arg:tt)*) => { $crate::__private::message!($crate, Forgettable, $($arg)*) };
}

/// Implementation details used by the macros' generated code. Not public API.
#[doc(hidden)]
pub mod __private;
