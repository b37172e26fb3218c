//! The cut of the per-entry cap: a text's head and tail kept around a visible marker
//! that names the bytes elided and the entry (what verifying a capped form looks for).

use crate::model::entry::EntryId;

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
