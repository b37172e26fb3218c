//! The per-entry cap: a kept entry over the policy's cap is shown shortened.

use crate::history::account::TokenCounter;
use crate::model::entry::EntryId;
use crate::model::message::{Message, Part};
use crate::request::forms;

/// Shortens the text parts and result contents of `message` so that it counts at most
/// `cap` tokens, keeping the head and the tail of each with a visible elision marker.
/// `None` if it cannot be brought under the cap (its calls alone exceed it).
pub(super) fn cap_message(
    message: &Message,
    id: EntryId,
    cap: u32,
    counter: &dyn TokenCounter,
) -> Option<Message> {
    let total: usize = message
        .parts
        .iter()
        .map(|p| match p {
            Part::Text(t) => t.len(),
            Part::ToolResult(r) => r.content.len(),
            // Calls, reasoning (signed) and media are kept whole.
            _ => 0,
        })
        .sum();
    if total == 0 {
        return None;
    }
    // Start from the heuristic inverse (about 4 bytes a token) and shrink until it fits.
    let mut allowed = (cap as usize).saturating_mul(4).saturating_sub(160);
    for _ in 0..6 {
        let mut out = message.clone();
        for part in &mut out.parts {
            let text = match part {
                Part::Text(t) => t,
                Part::ToolResult(r) => &mut r.content,
                _ => continue,
            };
            let share = allowed.saturating_mul(text.len()) / total;
            if text.len() > share {
                *text = elide(text, share, id);
            }
        }
        let tokens = forms::count(counter, &forms::sent(&out)).0;
        if tokens <= cap {
            return Some(out);
        }
        let over = tokens as usize;
        allowed = allowed.saturating_mul(cap as usize) / over.max(1);
        allowed = allowed.saturating_mul(9) / 10;
        if allowed == 0 {
            break;
        }
    }
    None
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

pub(crate) fn elide(text: &str, keep: usize, id: EntryId) -> String {
    let head = floor_boundary(text, keep * 2 / 3);
    let tail = ceil_boundary(text, text.len() - (keep - keep * 2 / 3)).max(head);
    format!(
        "{}{}{}",
        &text[..head],
        elision_marker(tail - head, id),
        &text[tail..]
    )
}

/// The marker the cap puts where it elided `bytes` bytes of entry `id`'s text (what
/// verifying a capped form looks for).
pub(crate) fn elision_marker(bytes: usize, id: EntryId) -> String {
    format!("\n[... {bytes} bytes elided by the per-entry cap; the original is entry {id} ...]\n")
}
