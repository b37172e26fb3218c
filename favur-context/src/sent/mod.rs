//! What is sent and what it costs: the forms an entry is shown in, the message each form
//! sends, its tokens and content blocks, the pairing rule of calls and results, the per-entry
//! cap, and every text the library writes in place of, or around, an entry's content. The
//! floor under the history (which counts what it records with it), the planner (which
//! counts reshaped entries with it) and the renderers (which send what [`shown()`] gives),
//! so that usage is the count of what is sent.
//!
//! Text from users, tools and models is data: every text is passed through
//! [`neutralize`] (the library's own tag names and the directive marker cannot be
//! produced by it), and text quoted inside a wrapper (a summary, an orphan result, a
//! tool call shown as text) also through [`neutralize_quoted`] (no line of it can pose as
//! a role marker).

mod cap;
mod command;
mod cost;
mod elide;
mod fold;
mod form;
mod marks;
mod quoted;
mod repairs;
mod scan;
mod shown;
mod texts;

pub(crate) use cap::cap_message;
pub(crate) use command::bash_blocks;
pub(crate) use cost::{
    WIDEST_ID, blocks, cost, count, count_block, first_turn_cost, is_blank, summary_frame_cost,
    system_pin_cost,
};
pub(crate) use elide::elision_marker;
pub use fold::LINE_BREAKS;
pub use form::Form;
pub(crate) use form::{StayForm, Staying};
pub use marks::{QUOTED_DIRECTIVE, TAG_NAMES, neutralize};
pub use quoted::neutralize_quoted;
pub(crate) use repairs::{Matcher, Repairs};
pub(crate) use shown::{as_sent, has_command, shown, system_text};
pub(crate) use texts::push_u64;
pub use texts::{
    FIRST_TURN_NOTE, SUMMARY_PREAMBLE, call_as_text, directive_block, missing_result,
    orphan_result, placeholder_text, summary_block, system_note,
};
