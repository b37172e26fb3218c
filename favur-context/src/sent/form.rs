//! The forms an entry is shown in ([`Form`]), and what planning remembers of an item
//! that stays in a reduced one ([`Staying`]: the memo a view keeps for the planner).

use serde::{Deserialize, Serialize};

use crate::model::entry::EntryId;
use crate::model::message::Message;

/// How an entry appears in the view.
///
/// ```
/// use favur_context::render::Form;
/// assert_ne!(Form::Verbatim, Form::CallsOnly);
/// assert_eq!(serde_json::to_string(&Form::Verbatim).unwrap(), r#""verbatim""#);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// As recorded (for a summary entry: the summary).
    Verbatim,
    /// Only the tool-call parts of an assistant entry: its text was compacted, but one of
    /// its calls still has a result in the view, and calls are never orphaned.
    CallsOnly,
    /// A tool entry whose results were compacted while their calls stay in the view: each
    /// result is shown as a short placeholder that keeps the call/result pairing valid and
    /// points at the summary that holds the gist, if any.
    Placeholder {
        /// The summary that replaced the result's content, if it was summarized rather
        /// than dropped.
        summary: Option<EntryId>,
    },
    /// The text shortened to a per-entry token cap, with a visible elision marker; the
    /// original stays in the history.
    Capped(Box<Message>),
    /// Only the fenced command blocks (```` ```bash ````) of a plain-chat assistant entry:
    /// its reasoning was compacted, but the observation its command produced is still
    /// in the view, and an observation is never shown without its command.
    Command,
}

/// The reduced form an item that stays is shown in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StayForm {
    /// Only its tool calls ([`Form::CallsOnly`]).
    CallsOnly,
    /// Its results as placeholders ([`Form::Placeholder`]).
    Placeholder,
    /// Only its fenced command blocks ([`Form::Command`]).
    Command,
}

/// An item that stays in a reduced form, and what it costs there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Staying {
    pub(crate) form: StayForm,
    /// Tokens in that form (for a placeholder, with the widest summary id).
    pub(crate) tokens: u32,
    /// Content blocks in that form.
    pub(crate) blocks: u32,
}
