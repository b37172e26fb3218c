//! Search hits of one file, folded into one line: `path: 12 40 88 (3 hits): first text`.

use std::borrow::Cow;
use std::fmt::Write as _;

use foldhash::HashMap;

use super::item::Item;
use super::line_kind::{self as lines, LineKind};
use super::producers::{cut, cut_borrowed};

/// Search hits of one file become one line: `path: 12 40 88 (3 hits): first text`.
pub(super) fn group_hits(items: &mut Vec<Item<'_>>, limit: usize) {
    if items
        .iter()
        .all(|it| it.kind != LineKind::Hit || it.acted.is_some())
    {
        return; // nothing to group
    }
    let (groups, folded) = groups_by_path(items);
    let texts: Vec<String> = groups.iter().map(|g| group_text(items, g, limit)).collect();
    for (g, text) in groups.iter().zip(texts) {
        items[g.at].text = Cow::Owned(text);
    }
    let mut k = 0;
    items.retain(|_| {
        k += 1;
        !folded[k - 1]
    });
}

/// The hits of one path: the item that shows them, how many, and the items with a line
/// number (in order).
struct Group {
    at: usize,
    hits: usize,
    numbered: Vec<usize>,
}

/// The hits of each path, in order, and per item whether it is folded into an earlier
/// hit of its path. A hit acted on since is shown verbatim, not folded.
fn groups_by_path(items: &[Item<'_>]) -> (Vec<Group>, Vec<bool>) {
    let mut groups: Vec<Group> = Vec::new();
    let mut folded = vec![false; items.len()];
    let mut by_path: HashMap<&str, usize> = HashMap::default();
    for (k, it) in items.iter().enumerate() {
        if it.kind != LineKind::Hit || it.acted.is_some() {
            continue;
        }
        let Some((path, line)) = lines::hit(&it.text) else {
            continue;
        };
        match by_path.get(path) {
            Some(&g) => {
                let group = &mut groups[g];
                group.hits += 1;
                if !line.is_empty() {
                    group.numbered.push(k);
                }
                folded[k] = true;
            }
            None => {
                by_path.insert(path, groups.len());
                groups.push(Group {
                    at: k,
                    hits: 1,
                    numbered: if line.is_empty() { Vec::new() } else { vec![k] },
                });
            }
        }
    }
    (groups, folded)
}

/// The one line of a group: the path, the line numbers of its hits (the first 12), how
/// many, and the text of the first.
fn group_text(items: &[Item<'_>], g: &Group, limit: usize) -> String {
    let line_of = |k: usize| lines::hit(&items[k].text).map_or("", |(_, line)| line);
    let shown = &items[g.at].text;
    let (path, line) = lines::hit(shown).unwrap_or((shown, ""));
    let first = shown[path.len() + 1 + line.len()..]
        .trim_start_matches([':', '-'])
        .trim();
    let mut text = String::with_capacity(limit + 8);
    text.push_str(path);
    if !g.numbered.is_empty() {
        text.push(':');
        for &k in g.numbered.iter().take(12) {
            text.push(' ');
            text.push_str(line_of(k));
        }
        if g.numbered.len() > 12 {
            text.push_str(" …");
        }
    }
    if g.hits > 1 {
        let _ = write!(text, " ({} hits)", g.hits);
    }
    if !first.is_empty() {
        text.push_str(": ");
        text.push_str(&cut_borrowed(first, 80));
    }
    cut(&text, limit)
}
