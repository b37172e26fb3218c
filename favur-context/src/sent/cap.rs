//! The per-entry cap: a kept entry over the policy's cap is shown shortened.

use super::cost::count;
use super::elide::elide;
use super::shown::as_sent;
use crate::model::entry::EntryId;
use crate::model::message::{Message, Part};
use crate::tokens::counter::TokenCounter;

/// Shortens the text parts and result contents of `message` so that it counts at most
/// `cap` tokens, keeping the head and the tail of each with a visible elision marker.
/// `None` if it cannot be brought under the cap (its calls alone exceed it).
pub(crate) fn cap_message(
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
        let tokens = count(counter, &as_sent(&out)).0;
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
