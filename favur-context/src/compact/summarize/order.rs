//! The order an entry's candidate lines are offered in: the lines the agent acted on and
//! the rest as read, then frames of the project's own code (the innermost first), then
//! other frames; among them the definitions and their docs outermost first, each doc
//! tied to the definition it documents.
//!
//! What flows through: an entry's [`Item`]s as its reading found them → the same items,
//! deduplicated and reordered, which the budget's passes scan in this order.

use super::item::Item;
use super::line_kind::{self, LineKind};

/// The items of an entry as they are offered: every line but a frame (or a frame acted
/// on) as read, then the frames of the project's own code, the innermost (last) first,
/// then other frames; an identical line once; the skeleton outermost first.
pub(super) fn order_items(items: Vec<Item<'_>>) -> Vec<Item<'_>> {
    let mut seen: foldhash::HashSet<String> =
        foldhash::HashSet::with_capacity_and_hasher(items.len(), Default::default());
    let mut ordered: Vec<Item> = Vec::with_capacity(items.len());
    let (mut project, mut elsewhere): (Vec<Item>, Vec<Item>) = (Vec::new(), Vec::new());
    for it in items {
        if !seen.insert(it.text.to_string()) {
            continue;
        }
        if it.kind != LineKind::Location || it.acted.is_some() {
            ordered.push(it);
        } else if line_kind::is_project_location(&it.text) {
            project.push(it);
        } else {
            elsewhere.push(it);
        }
    }
    project.reverse();
    ordered.extend(project);
    ordered.extend(elsewhere);
    outermost_first(&mut ordered);
    ordered
}

/// Points each doc line (not acted on) at the item of the definition it documents.
pub(super) fn link_docs(items: &mut [Item<'_>]) {
    if !items.iter().any(|it| it.kind == LineKind::Doc) {
        return;
    }
    let definitions: foldhash::HashMap<usize, usize> = (items.iter().enumerate())
        .filter(|(_, it)| it.kind == LineKind::Definition)
        .map(|(i, it)| (it.order, i))
        .collect();
    for it in items.iter_mut() {
        if it.kind == LineKind::Doc && it.acted.is_none() {
            it.of = it.context.and_then(|o| definitions.get(&o).copied());
        }
    }
}

/// Reorders the definitions and their docs among their own places, the outermost first
/// and otherwise in order: a skeleton cut by the budget then covers the whole file (its
/// classes and functions) before the methods of its first classes. (A definition the
/// agent acted on and the acted pass left out is offered as part of the skeleton.)
fn outermost_first(items: &mut [Item<'_>]) {
    let skeleton = |it: &Item<'_>| matches!(it.kind, LineKind::Definition | LineKind::Doc);
    let places: Vec<usize> = (0..items.len()).filter(|&i| skeleton(&items[i])).collect();
    let mut by_depth = places.clone();
    by_depth.sort_by_key(|&i| items[i].depth);
    // Apply the permutation `places[k] <- by_depth[k]` by swaps (each cycle in turn).
    let mut target: Vec<usize> = vec![usize::MAX; items.len()];
    for (&to, &from) in places.iter().zip(&by_depth) {
        target[from] = to;
    }
    for start in places {
        while target[start] != start && target[start] != usize::MAX {
            let to = target[start];
            items.swap(start, to);
            target.swap(start, to);
        }
    }
}
