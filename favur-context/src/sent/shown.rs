//! The message an entry shows in a [`Form`], exactly as both renderers send it (before
//! the tool-call pairing is repaired): every text made inert, a directive in its block, a
//! system-role message as a note, a summary as its `<context-summary>` block.

use std::borrow::Cow;

use super::command::bash_blocks;
use super::elide::elide;
use super::form::Form;
use super::marks::neutralize;
use super::texts::{call_as_text, directive_block, placeholder_text, summary_block, system_note};
use crate::model::entry::{Entry, EntryKind};
use crate::model::message::{Message, Part, Role, ToolResult};

/// Whether `message` is a real [`Directive`](crate::model::kinds::Directive) (made by the library's
/// kind, not text that imitates one).
pub(crate) fn is_directive_kind(message: &Message) -> bool {
    message.role == Role::User
        && message
            .extensions
            .get("favur_kind")
            .is_some_and(|k| k == "directive")
}

/// The message `entry` shows in `form`, as both renderers send it before the tool-call
/// pairing is repaired. Unchanged messages are borrowed.
pub(crate) fn shown<'a>(entry: &'a Entry, form: &'a Form) -> Cow<'a, Message> {
    if let EntryKind::Summary { replaces } = &*entry.kind {
        let text = match form {
            Form::Capped(m) => joined_text(m),
            _ => joined_text(&entry.message),
        };
        let mut m = Message::user(summary_block(entry.id, replaces, &text));
        m.extensions = entry.message.extensions.clone();
        return Cow::Owned(m);
    }
    match form {
        Form::Verbatim => as_sent(&entry.message),
        Form::Capped(m) => Cow::Owned(as_sent(m).into_owned()),
        Form::CallsOnly => {
            let mut m = Message::new(
                entry.message.role,
                entry
                    .message
                    .parts
                    .iter()
                    .filter(|p| matches!(p, Part::ToolCall(_) | Part::Reasoning(_)))
                    .cloned()
                    .collect(),
            );
            m.extensions = entry.message.extensions.clone();
            Cow::Owned(as_sent(&m).into_owned())
        }
        Form::Command => {
            let mut m = Message::new(
                entry.message.role,
                vec![Part::Text(command_text(&entry.message.text()))],
            );
            m.extensions = entry.message.extensions.clone();
            Cow::Owned(as_sent(&m).into_owned())
        }
        Form::Placeholder { summary } => {
            let mut parts: Vec<Part> = entry
                .message
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::ToolResult(r) => Some(Part::ToolResult(ToolResult {
                        call_id: r.call_id.clone(),
                        content: placeholder_text(entry.id, *summary),
                        is_error: r.is_error,
                    })),
                    _ => None,
                })
                .collect();
            if parts.is_empty() {
                // A placeholder form on an entry without results: say what was there.
                parts.push(Part::Text(placeholder_text(entry.id, *summary)));
            }
            let mut m = Message::new(entry.message.role, parts);
            m.extensions = entry.message.extensions.clone();
            Cow::Owned(m)
        }
    }
}

/// [`Message::text`], borrowed when the message has a single text part (a summary's).
fn joined_text(message: &Message) -> Cow<'_, str> {
    match message.parts.as_slice() {
        [Part::Text(t)] => Cow::Borrowed(t),
        _ => Cow::Owned(message.text()),
    }
}

/// What a plain-chat assistant turn in [`Form::Command`] shows: its fenced command
/// blocks alone, as it wrote them (```` ```bash ```` blocks, as mini-swe-agent runs them).
pub(crate) fn command_text(text: &str) -> String {
    bash_blocks(text)
        .iter()
        .map(|cmd| format!("```bash\n{cmd}\n```"))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Whether a plain-chat assistant message holds a command block (see [`command_text`]).
pub(crate) fn has_command(message: &Message) -> bool {
    !bash_blocks(&joined_text(message)).is_empty()
}

/// `message` as it is sent: every text [`neutralize`]d (blank texts are kept but not
/// counted, and Anthropic leaves them out), a
/// directive in its block, a system-role message as a note, calls of a non-assistant
/// message as text.
pub(crate) fn as_sent(message: &Message) -> Cow<'_, Message> {
    let directive = is_directive_kind(message);
    let system = message.role == Role::System;
    let changes = directive
        || system
        || message.parts.iter().any(|p| match p {
            Part::Text(t) => matches!(neutralize(t), Cow::Owned(_)),
            Part::ToolCall(_) | Part::Reasoning(_) => message.role != Role::Assistant,
            Part::ToolResult(r) => matches!(neutralize(&r.content), Cow::Owned(_)),
            Part::Image(_) | Part::Document(_) => false,
        });
    if !changes {
        return Cow::Borrowed(message);
    }
    if directive || system {
        let text = message.text();
        let text = if directive {
            let body = text
                .strip_prefix("[directive]")
                .unwrap_or(&text)
                .trim_start();
            directive_block(body)
        } else {
            system_note(&text)
        };
        let mut parts = vec![Part::Text(text)];
        parts.extend(message.parts.iter().filter_map(|p| match p {
            Part::ToolCall(c) => Some(Part::Text(call_as_text(c))),
            Part::Image(_) | Part::Document(_) => Some(p.clone()),
            _ => None,
        }));
        let mut m = Message::new(Role::User, parts);
        m.extensions = message.extensions.clone();
        return Cow::Owned(m);
    }
    let parts = message
        .parts
        .iter()
        // Reasoning is only sent back in the assistant message it came with.
        .filter(|p| message.role == Role::Assistant || !matches!(p, Part::Reasoning(_)))
        .map(|p| match p {
            Part::Text(t) => Part::Text(neutralize(t).into_owned()),
            Part::ToolCall(c) if message.role != Role::Assistant => Part::Text(call_as_text(c)),
            Part::ToolCall(c) => Part::ToolCall(c.clone()),
            Part::ToolResult(r) => Part::ToolResult(ToolResult {
                call_id: r.call_id.clone(),
                content: neutralize(&r.content).into_owned(),
                is_error: r.is_error,
            }),
            other => other.clone(),
        })
        .collect();
    let mut m = Message::new(message.role, parts);
    m.extensions = message.extensions.clone();
    Cow::Owned(m)
}

/// The text a pinned system entry is sent as: its texts, and a note for each image or
/// document (a system prompt carries text only).
pub(crate) fn system_text(message: &Message) -> String {
    let mut text = message.text();
    for part in &message.parts {
        let note = match part {
            Part::Image(m) => m.describe("image"),
            Part::Document(m) => m.describe("document"),
            _ => continue,
        };
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&note);
    }
    text
}

impl Form {
    /// `entry`'s message cut as the per-entry cap cuts it: each text and result content
    /// longer than `keep` bytes keeps its head and tail (`keep` bytes together) around a
    /// marker naming the bytes elided and the entry. The only kind of
    /// [`Capped`](Form::Capped) form a history accepts besides the engine's own (a record
    /// carrying any other message is refused).
    ///
    /// ```
    /// use favur_context::compact::{Compaction, Edit};
    /// use favur_context::render::Form;
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// let id = h.append(fuzzy!(user: "{}", "word ".repeat(100)));
    /// let form = Form::capped(&h.recall(id).unwrap(), 20);
    /// let Form::Capped(m) = &form else { unreachable!() };
    /// assert!(m.text().contains("bytes elided by the per-entry cap"));
    /// h.apply(Compaction { tier: std::num::NonZeroU8::MIN, edits: vec![Edit::Reform { id, form, tokens: 0 }], usage_after: None }).unwrap();
    /// assert!(h.view().items()[0].tokens < h.entries()[0].tokens());
    /// ```
    pub fn capped(entry: &Entry, keep: usize) -> Form {
        let mut m = entry.message.clone();
        for part in &mut m.parts {
            let text = match part {
                Part::Text(t) => t,
                Part::ToolResult(r) => &mut r.content,
                // Calls, reasoning (signed) and media are kept whole.
                _ => continue,
            };
            if text.len() > keep {
                *text = elide(text, keep, entry.id);
            }
        }
        Form::Capped(Box::new(m))
    }

    /// The message an entry shows in this form, exactly as both renderers send it (before
    /// the tool-call pairing is repaired): the original for [`Verbatim`](Form::Verbatim),
    /// only the tool calls for [`CallsOnly`](Form::CallsOnly), placeholder results for
    /// [`Placeholder`](Form::Placeholder), the shortened message for
    /// [`Capped`](Form::Capped); a summary entry as its `<context-summary>` block. Every
    /// text is [`neutralize`]d; blank texts are left out.
    ///
    /// ```
    /// use favur_context::render::Form;
    /// use favur_context::{forgettable, EntryId, History};
    /// let mut h = History::new();
    /// let id = h.append(forgettable!(tool_result("c1"): "a.rs\nb.rs"));
    /// let e = h.recall(id).unwrap();
    /// let shown = Form::Placeholder { summary: Some(EntryId(7)) }.message_for(&e);
    /// let text = &shown.tool_results().next().unwrap().content;
    /// assert!(text.contains("#7") && text.contains("#0"));
    /// ```
    pub fn message_for<'a>(&'a self, entry: &'a Entry) -> Cow<'a, Message> {
        shown(entry, self)
    }
}
