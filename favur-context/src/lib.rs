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
//! assert_eq!(history.recall(id).unwrap().retention(), Retention::Strict);
//! ```
//!
//! On a **function or method**, `append`/`pin` on its history parameters (`&mut History`,
//! `&mut JournaledHistory`, `&mut self` of an extension trait, a generic `&mut H`...) accept
//! plain content inside its body, appended with that class (outside such a function plain
//! content is still a compile error):
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
//! [`message::kinds::Directive`] (a directive injected into a running agent) and
//! [`message::kinds::ProgressNote`] (the agent's progress journal) are both strict, and are
//! classified with the same attribute.
//!
//! # The history and its view
//!
//! The history records every entry and never edits it. What the model is shown is the
//! [`View`](compact::View), derived from the history by recorded [`Compaction`](compact::Compaction)s: entries leave the view
//! or are replaced by summaries there, but their originals stay retrievable by id with
//! [`History::recall`]. [`History`] is `Send + Sync`.
//!
//! # Stores
//!
//! [`History`] is the in-memory [`Store`]; [`JournaledHistory`](journal::JournaledHistory) is the durable one (a
//! JSON-lines file). Every store records the same two things, entries and compaction
//! records, and everything else takes any store the same way: before each model request,
//! [`Compactor::prepare`] (or [`prepare_async`](Compactor::prepare_async) with an LLM
//! summarizer) compacts if a tier is due, records the compaction in the store, and
//! reports what it did.
//!
//! ```
//! use favur_context::store::NewEntry;
//! use favur_context::journal::JournaledHistory;
//! use favur_context::{fuzzy, strict, Compactor, Policy, Store};
//! # let path = std::env::temp_dir().join(format!("favur-doc-lib-{}.jsonl", std::process::id()));
//! # let _ = std::fs::remove_file(&path);
//! // Setup runs once, when the journal is new; a restart resumes where it stopped.
//! let mut history = JournaledHistory::open_or_create(&path, || vec![
//!     NewEntry::pinned(strict!(system: "You are a careful coding agent.")),
//!     NewEntry::appended(strict!(user: "Make the tests pass.")),
//! ])?;
//! assert!(history.history().pending_calls().is_empty()); // nothing left unanswered
//! let mut compactor = Compactor::new(Policy::default());
//! history.append(fuzzy!(assistant: "Running the tests first."))?;
//! let done = compactor.prepare(&mut history)?;
//! assert_eq!(done.usage_tokens, history.history().usage_tokens());
//! # drop(history); std::fs::remove_file(&path).unwrap();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// On docs.rs (nightly, `--cfg docsrs`): every feature-gated item is labelled with the
// feature it needs. Stable builds never see this.
#![cfg_attr(docsrs, feature(doc_cfg))]

// Lets the macros' absolute `::favur_context::...` paths resolve inside this crate too.
extern crate self as favur_context;

// The flow: a message is classified where it is appended (model), counted (tokens) as it
// is sent (sent), recorded (history), planned and summarized when a tier is due (compact),
// kept durable (store, journal, database) and rendered for a provider (request); replies
// come back in (reply), tools answer calls (tools); import and audit read recorded runs.
// Each module imports only from those under it (docs/architecture.md, "The floors").
#[macro_use]
mod setters;
pub mod compact;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod database;
mod history;
pub mod journal;
mod model;
pub mod reply;
mod request;
mod sent;
// The Store traits; `store` below is the public door to what a store records and the
// database stores (a door here, above both, so that neither imports the other).
mod store_trait;
pub mod tokens;
pub mod tools;

pub mod audit;
pub mod import;
mod json_keys;
pub mod message;

#[cfg(any(feature = "async-openai", feature = "rig"))]
pub use request::interop;
pub use request::render;

pub use compact::compactor::Compactor;
pub use compact::policy::Policy;
pub use history::History;
pub use model::classify::{Classified, Classify};
pub use model::entry::{Entry, EntryId};
pub use model::message::{Message, Role, ToolCall};
pub use model::retention::Retention;
pub use store_trait::{AsyncStore, Store};

/// Where histories are kept: the schema version, the database stores (features `sqlite`
/// and `postgres`) and the record protocol every [`Store`] speaks (entries, compaction
/// records, their checks and errors).
pub mod store {
    #[cfg(feature = "postgres")]
    pub use crate::database::PgStore;
    #[cfg(feature = "sqlite")]
    pub use crate::database::SqliteStore;
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub use crate::database::{Claim, DEFAULT_LEASE, SessionOptions, StoreError};
    pub use crate::history::{
        CheckedCompaction, CounterChange, DEFAULT_FRAMING_TOKENS, KeyError, LoadError,
        MAX_KEY_BYTES, NewEntry, Originals, RecallError, RecordError,
    };
    pub use crate::store_trait::SCHEMA_VERSION;
    pub use crate::store_trait::seal::{
        MIN_SEAL_KEY_BYTES, SealHead, SealKey, SealKeyError, Tamper,
    };
}

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
/// assert_eq!(history.recall(id).unwrap().retention(), Retention::Forgettable);
/// ```
///
/// **A function or method with a history parameter**: inside the body, `p.append(x)` and
/// `p.pin(x)` on a history parameter `p` take plain content (`&str`, `String`, `&String`,
/// [`Message`]) and classify it with the function's class; values that have a class of
/// their own keep it. The call site is the `append` line. The parameters stay exactly as
/// declared, so the history can be passed on as it is (`helper(history)`), borrowed from and
/// returned from (`-> &Entry`). Outside such a function, plain content is still a compile
/// error.
///
/// The history parameters are those declared `&mut` of a type whose name ends in `History`
/// ([`History`], [`JournaledHistory`](journal::JournaledHistory), `favur_context::History`...);
/// if there is none, `&mut self` and every `&mut` parameter (a type alias of a history, an
/// extension trait implemented for one, a wrapper's method, a generic `&mut H`).
///
/// - On a parameter of a concrete type, the call goes to that history, and returns what its
///   own `append` returns (`Result<EntryId, JournalError>` for a [`JournaledHistory`](journal::JournaledHistory)). A
///   type that is not a history is a compile error saying so (`` `Vec<String>` is not a
///   history ``), at the parameter; call its own method as `Vec::append(list, ..)`.
/// - On `self`, on a parameter of a generic type (`&mut H`, `&mut impl Trait`) and on a
///   field of a history parameter (`self.history.append(x)`, `self.0.append(x)`), the
///   receiver's own `append`/`pin` is called, with the content already classified (a
///   [`Classified`]): any type whose `append` takes a classified value works, through
///   `Deref` too.
///
/// Only calls written on the parameter itself (or a field of it) in the function's own body
/// are rewritten (closures and blocks included): not in a nested `fn`, not on a local or a
/// binding that shadows the parameter's name, not inside a macro invocation's arguments.
/// There, plain content is the usual "has no retention class" error.
///
/// ```
/// use favur_context::journal::{JournalError, JournaledHistory};
/// use favur_context::{retention, EntryId, History, Retention};
///
/// #[retention(strict)]
/// fn record_failure(history: &mut History, trace: &str) {
///     history.append(format!("cargo test failed:\n{trace}"));
/// }
///
/// #[retention(fuzzy)]
/// fn record_view(journal: &mut JournaledHistory, path: &str) -> Result<EntryId, JournalError> {
///     journal.append(format!("viewed {path}"))
/// }
///
/// trait Note {
///     fn note(&mut self, text: &str) -> EntryId;
/// }
///
/// impl Note for History {
///     #[retention(forgettable)]
///     fn note(&mut self, text: &str) -> EntryId {
///         self.append(text)
///     }
/// }
///
/// let mut history = History::new();
/// record_failure(&mut history, "thread 'main' panicked at src/lib.rs:3:5");
/// assert_eq!(history.entries()[0].retention(), Retention::Strict);
/// let id = history.note("Cargo.toml\nsrc/");
/// assert_eq!(history.recall(id).unwrap().retention(), Retention::Forgettable);
///
/// let path = std::env::temp_dir().join(format!("favur-doc-retention-{}.jsonl", std::process::id()));
/// # let _ = std::fs::remove_file(&path);
/// let mut journal = JournaledHistory::open(&path)?;
/// let id = record_view(&mut journal, "src/lib.rs")?;
/// assert_eq!(journal.history().recall(id).unwrap().retention(), Retention::Fuzzy);
/// # drop(journal); std::fs::remove_file(&path).unwrap();
/// # Ok::<(), JournalError>(())
/// ```
///
/// **An `impl Tool for T` block**: the tool implements [`ClassifiedTool`](tools::ClassifiedTool), and every result
/// appended with [`History::run_tool`] or [`History::append_tool_result`] has its class.
///
/// ```
/// use favur_context::tools::Tool;
/// use favur_context::{retention, History, Retention, ToolCall};
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
/// assert_eq!(history.recall(id).unwrap().retention(), Retention::Fuzzy);
/// ```
///
/// **`crate = path`** names favur-context when it is a renamed dependency or re-exported
/// (like serde's `#[serde(crate = "...")]`; a string works too: `crate = "my_favur"`). The
/// generated code names only paths under it (by default `::favur_context`).
///
/// ```
/// use favur_context as fc; // as a crate that renames the dependency would name it
/// use fc::{retention, History, Retention};
///
/// #[retention(fuzzy, crate = fc)]
/// fn record(history: &mut History, text: &str) {
///     history.append(text);
/// }
///
/// let mut history = History::new();
/// record(&mut history, "a file view");
/// assert_eq!(history.entries()[0].retention(), Retention::Fuzzy);
/// ```
///
/// Anything else is a compile error spanned at the offending token and naming the valid
/// classes: a misspelled class (`stric`: did you mean `strict`?), a missing class, two
/// classes, an argument that is not a class name (`"strict"`, `class = strict`, a path),
/// a `crate = ...` that is not a path, or an unsupported item (a const, a module, a trait,
/// an inherent impl, an impl of another trait, a function without a history parameter).
/// All errors of one attribute are reported together, and the item is still emitted so no
/// secondary errors follow.
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
/// | `tool_calls: expr` | the same from any `IntoIterator<Item = ToolCall>` (the calls of a parsed reply, a `Vec<ToolCall>`, `[call_a, call_b]`) |
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
/// let reply_calls = vec![favur_context::ToolCall::new("c6", "bash", r#"{"command":"ls"}"#)];
/// let i = strict!(tool_calls: reply_calls);
/// assert_eq!(a.message().text(), "Fix the parser before Friday");
/// assert_eq!(g.message().tool_calls().count(), 2);
/// assert_eq!(i.message().tool_calls().next().unwrap().id, "c6");
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

/// The README's code blocks, compiled as doctests (the agent loop needs the `llm` feature).
#[cfg(all(doctest, feature = "llm"))]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// Implementation details used by the macros' generated code. Not public API.
#[doc(hidden)]
pub mod __private;
