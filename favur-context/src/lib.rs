//! favur-context: classified conversation history for long-running LLM agents.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// Lets the macros' absolute `::favur_context::...` paths resolve inside this crate too.
extern crate self as favur_context;

mod account;
mod classify;
mod compact;
mod entry;
mod history;
mod message;
mod plan;
mod policy;
mod retention;
mod site;
mod summarize;
mod tool;
mod view;

pub mod import;
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
pub use history::{DEFAULT_FRAMING_TOKENS, History, LoadError};
pub use message::{Arguments, Message, Part, Role, ToolCall, ToolResult};
pub use plan::{ByClass, ClassOutcome, Figures, Plan, PlannedReform, Run, placeholder_text};
pub use policy::{
    Action, DEFAULT_SUMMARY_BUDGET_TOKENS, DEFAULT_WINDOW_TOKENS, Policy, PolicyBuilder,
    PolicyError, Tier,
};
pub use retention::{ParseRetentionError, Retention, class};
pub use site::CallSite;
pub use summarize::{
    AsyncSummarizer, BuiltinSummarizer, Ready, SummarizeError, Summarizer, SummaryRequest,
};
pub use tool::{ClassifiedTool, Tool};
pub use view::{ApplyError, Compaction, Edit, Form, View, ViewItem};

/// Marks an item with a retention class. See the [crate docs](crate#the-retentionclass-attribute).
#[doc(inline)]
pub use favur_context_macros::retention;

/// Builds a [`Classified`] message with the [`Strict`](Retention::Strict) class: the exact
/// text is needed until the end (a stack trace, the plan, a directive).
///
/// Forms (each records the call site):
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
