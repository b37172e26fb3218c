//! What one entry offers a summary: its header (what produced it, its status and size)
//! and its candidate lines, each with its kind, its place, and whether the agent acted
//! on it since.

use std::fmt::Write as _;

use super::item::Item;
use super::line_kind::LineKind;
use super::lines::Lines;
pub(super) use super::lines::Reading;
use super::order;
use super::producers::{Producer, command_line, fenced_command, one_line};
use super::regions::{self, Segment};
use crate::model::entry::{Entry, EntryId};
use crate::model::message::{Part, Role};

/// Most lines that say something an output may have for its first lines to be offered
/// as lead lines, like the first lines of prose: a script's printed result, a one-line
/// check. In a longer output, lines no rule keeps are noise more often than not (a test
/// run's header). (Offering every line of a short output after every other kind instead
/// cost 1.4% more mean tokens on the shared traces, and 2 spans at 300k.)
pub(super) const SHORT_OUTPUT_LINES: usize = 8;

/// What one entry contributes (what of it is kept is chosen by the budget's passes).
pub(super) struct Digest<'a> {
    pub(super) header: String,
    pub(super) items: Vec<Item<'a>>,
    /// Lines of an output that say something (not blank, not markup or its status); 0
    /// for what a person or the agent wrote. A summary that keeps fewer says how to get
    /// the rest.
    pub(super) output_lines: usize,
    /// The segments of its hot regions (their lines are among `items`).
    pub(super) segments: Vec<Segment>,
    /// Its [supersession key](crate::Classified::with_key): entries with the same key
    /// show the same file, so a numbered line one of them keeps is not kept twice.
    pub(super) key: Option<&'a str>,
}

/// What `e` contributes to a summary, and the texts its names are read from.
pub(super) fn digest<'a>(e: &'a Entry, r: &Reading<'_, 'a>) -> (Digest<'a>, Vec<&'a str>) {
    let (mut header, texts, error) = header_and_texts(e, r);
    let m = e.message();
    let prose = matches!(m.role, Role::Assistant | Role::System)
        || (m.role == Role::User && !r.producers.has_command_before(e) && !e.kind().is_summary());
    let mut lines = Lines::new(e, r, prose, &texts);
    for t in &texts {
        lines.read_text(t);
    }
    let Lines {
        mut items,
        status,
        total,
        output,
        raw,
        short,
        ..
    } = lines;
    // A short output without an outline of its own (a diff's headers, a view's
    // definitions, a traceback's frames, which its other lines only fill in) leads with
    // its first lines.
    let outlined =
        (items.iter()).any(|it| matches!(it.kind, LineKind::Definition | LineKind::Location));
    if output <= SHORT_OUTPUT_LINES && !outlined {
        let leads = short.into_iter();
        items.extend(leads.map(|(order, text)| Item::line(LineKind::Plain, order, text)));
    }
    super::hits::group_hits(&mut items, r.limit);
    let mut items = order::order_items(items);
    order::link_docs(&mut items);
    let segments = regions::find(&mut items, &raw);
    if error {
        header.push_str(" [error]");
    }
    if let Some(s) = status {
        header.push(' ');
        header.push_str(&s);
    }
    if !prose && !e.kind().is_summary() && output == 0 {
        // Only its status and markup (`<output>\n</output>`): it printed nothing.
        header.push_str(" (no output)");
    } else if total > 1 {
        header.push_str(" (");
        crate::sent::push_u64(&mut header, total as u64);
        header.push_str(" lines)");
    }
    let digest = Digest {
        header,
        items,
        output_lines: output,
        segments,
        key: crate::model::classify::key_of(m),
    };
    (digest, texts)
}

/// The start of `e`'s header (its id, role and what produced it), the texts it holds,
/// and whether it is an error result.
fn header_and_texts<'a>(e: &'a Entry, r: &Reading<'_, 'a>) -> (String, Vec<&'a str>, bool) {
    let m = e.message();
    let mut header = String::with_capacity(96);
    push_id(&mut header, e.id());
    let mut texts: Vec<&'a str> = Vec::with_capacity(m.parts.len());
    let mut error = false;
    match m.role {
        Role::Assistant => header.push_str(" assistant"),
        Role::User if e.kind().is_summary() => header.push_str(" (earlier summary)"),
        Role::User => match r.producers.command_before(e) {
            Some(Producer::Above(turn, _)) => {
                header.push_str(" output of ");
                push_id(&mut header, turn);
            }
            Some(Producer::Named(_, cmd)) => {
                let _ = write!(header, " output of `{cmd}`");
            }
            None => header.push_str(" user"),
        },
        Role::System => header.push_str(" system"),
        Role::Tool => {}
    }
    for part in &m.parts {
        match part {
            Part::Text(t) => texts.push(t),
            Part::ToolCall(c) => {
                let _ = write!(header, " → {} `{}`", c.name, command_line(c, r.limit));
            }
            Part::ToolResult(res) => {
                push_result_producer(&mut header, r.producers.call(&res.call_id, r.limit), res);
                error |= res.is_error;
                texts.push(&res.content);
            }
            // Visible reasoning is digested like text; its signature and encrypted
            // payload never reach a summary.
            Part::Reasoning(x) => texts.extend(x.text.iter().map(String::as_str)),
            // Media are mentioned in one line (never their data).
            Part::Image(media) => header.push_str(&format!(" {}", media.describe("image"))),
            Part::Document(media) => header.push_str(&format!(" {}", media.describe("document"))),
        }
    }
    if m.role == Role::Assistant {
        for t in &texts {
            if let Some(cmd) = fenced_command(t) {
                let _ = write!(header, " → ran `{}`", one_line(cmd, r.limit));
            }
        }
    }
    (header, texts, error)
}

/// What produced a tool result, on its header.
fn push_result_producer(
    header: &mut String,
    producer: Option<Producer<'_>>,
    res: &crate::model::message::ToolResult,
) {
    match producer {
        Some(Producer::Above(at, name)) => {
            header.push(' ');
            header.push_str(name);
            header.push_str(" result of ");
            push_id(header, at);
        }
        Some(Producer::Named(name, cmd)) => {
            let _ = write!(header, " {name} `{cmd}`");
        }
        None => {
            let _ = write!(header, " result of call {}", one_line(&res.call_id, 80));
        }
    }
}

/// Appends `id` as its `Display` writes it (`#12`).
pub(super) fn push_id(out: &mut String, id: EntryId) {
    out.push('#');
    crate::sent::push_u64(out, id.0);
}
