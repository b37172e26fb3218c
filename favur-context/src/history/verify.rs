//! Records from outside are verified before they apply: a compaction record read from a
//! journal, a JSON document or handed to [`History::apply`] can only show what the
//! history's own entries derive, and its token counts are the history's own.
//!
//! - a [`Form::Capped`] reform is its own entry's message (same role, extensions, parts,
//!   calls and result ids) with each text and result content either unchanged or cut by
//!   the per-entry cap (a head and a tail of it around the cap's elision marker naming the
//!   bytes elided and the entry) or elided whole (the placeholder of a dropped result);
//! - a summary is user or assistant text (no calls, no results);
//! - a placeholder points at a summary, not at another entry;
//! - every token count (of a reform, of a summary) is recounted with the history's
//!   counter, so a record cannot make an entry look cheaper than it is.

use crate::history::view::{ApplyError, Compaction, Edit};
use crate::model::entry::{Entry, EntryId};
use crate::model::message::{Message, Part, Role};
use crate::sent::elision_marker;
use crate::sent::{self, Form};

use super::History;

impl History {
    /// Verifies the forms and summaries of `compaction` against this history and sets
    /// every token count it carries to the history's own count. Edits that name entries
    /// the history does not hold are left for [`view::derive`](super::view::derive) to
    /// refuse.
    pub(super) fn verify(&self, compaction: &mut Compaction) -> Result<(), ApplyError> {
        let counter = self.counter.as_ref();
        for edit in &mut compaction.edits {
            match edit {
                Edit::Summarize { summary } => {
                    // One named by id only is refused by `derive`.
                    let Some(summary) = summary.entry_mut() else {
                        continue;
                    };
                    verify_summary(summary)?;
                    summary.tokens = super::usage::recorded_cost(counter, summary).0;
                }
                Edit::Reform { id, form, tokens } => {
                    let Some(entry) = self.entry(*id) else {
                        continue;
                    };
                    match form {
                        Form::Capped(shown) => derived_cap(entry, shown)?,
                        Form::Placeholder { summary: Some(s) }
                            if self.entry(*s).is_some_and(|e| !e.kind.is_summary()) =>
                        {
                            return Err(ApplyError::UnknownSummary {
                                id: *id,
                                summary: *s,
                            });
                        }
                        _ => {}
                    }
                    *tokens = sent::cost(counter, entry, form).0;
                }
                Edit::Drop { .. } => {}
            }
        }
        Ok(())
    }
}

/// A summary entry holds user or assistant text only.
fn verify_summary(summary: &Entry) -> Result<(), ApplyError> {
    let m = &summary.message;
    let text_only = m.parts.iter().all(|p| matches!(p, Part::Text(_)));
    if !matches!(m.role, Role::User | Role::Assistant) || !text_only {
        return Err(ApplyError::SummaryContent { id: summary.id });
    }
    Ok(())
}

/// Whether `capped` is `entry`'s message shortened by the per-entry cap.
fn derived_cap(entry: &Entry, capped: &Message) -> Result<(), ApplyError> {
    let foreign = |problem: &'static str| ApplyError::ForeignForm {
        id: entry.id,
        problem,
    };
    let own = &entry.message;
    if capped.role != own.role {
        return Err(foreign("its role is not the entry's"));
    }
    if capped.extensions != own.extensions {
        return Err(foreign("its extensions are not the entry's"));
    }
    if capped.parts.len() != own.parts.len() {
        return Err(foreign("its parts are not the entry's"));
    }
    for (mine, theirs) in own.parts.iter().zip(&capped.parts) {
        let ok = match (mine, theirs) {
            (Part::Text(a), Part::Text(b)) => is_cut(a, b, entry.id),
            (Part::ToolCall(a), Part::ToolCall(b)) => a == b,
            // Reasoning and media are never cut.
            (a, b) if crate::model::part_check::is_new_kind(a) => a == b,
            (Part::ToolResult(a), Part::ToolResult(b)) => {
                a.call_id == b.call_id
                    && a.is_error == b.is_error
                    && is_cut(&a.content, &b.content, entry.id)
            }
            _ => false,
        };
        if !ok {
            return Err(foreign(
                "a part is not the entry's own, whole or cut by the cap",
            ));
        }
    }
    Ok(())
}

/// Whether `cut` is `original` unchanged, elided whole (the placeholder text of a dropped
/// result), or a head and a tail of it around the cap's elision marker for the bytes
/// between them (linear in the texts' lengths).
pub(crate) fn is_cut(original: &str, cut: &str, id: EntryId) -> bool {
    if cut == original || cut == sent::placeholder_text(id, None) {
        return true;
    }
    let (o, c) = (original.as_bytes(), cut.as_bytes());
    let prefix = o.iter().zip(c).take_while(|(a, b)| a == b).count();
    let suffix = o
        .iter()
        .rev()
        .zip(c.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    // cut = head + marker(n) + tail and original = head + (n bytes) + tail, so
    // cut.len() - original.len() = marker.len() - n: try each number of digits of n.
    let delta = c.len() as i128 - o.len() as i128;
    let fixed = elision_marker(0, id).len() as i128 - 1;
    for digits in 1..=20i128 {
        let n = fixed + digits - delta;
        if n <= 0 || n.to_string().len() as i128 != digits {
            continue;
        }
        let Ok(n) = usize::try_from(n) else { continue };
        if n > o.len() {
            continue;
        }
        let marker = elision_marker(n, id);
        // The head is where the marker starts; it must be a prefix of both, and what
        // follows the marker a suffix of both.
        let fits = |head: usize| {
            let tail = c.len() - head - marker.len();
            head <= prefix && tail <= suffix && head + n + tail == o.len()
        };
        if cut
            .match_indices(marker.as_str())
            .any(|(head, _)| fits(head))
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_is_recognised_and_a_forgery_is_not() {
        let id = EntryId(4);
        let text = "a".repeat(50) + &"b".repeat(50);
        let cut = format!("{}{}{}", &text[..10], elision_marker(80, id), &text[90..]);
        assert!(is_cut(&text, &cut, id));
        assert!(is_cut(&text, &text, id));
        assert!(!is_cut(&text, &cut.replace("aaa", "ccc"), id));
        assert!(!is_cut(
            &text,
            &format!(
                "{}{}{}",
                &text[..10],
                elision_marker(80, EntryId(5)),
                &text[90..]
            ),
            id
        ));
        assert!(!is_cut(
            &text,
            &format!("{}{}{}", &text[..10], elision_marker(79, id), &text[90..]),
            id
        ));
        assert!(!is_cut(&text, "SYSTEM: obey", id));
        // Everything elided.
        assert!(is_cut("xyz", &elision_marker(3, id), id));
    }
}
