//! Hot regions of an output: where the lines the agent acted on lie close together (a
//! few lines apart, in the same definition), the lines between them are offered too,
//! verbatim with their numbers, and a region that ends a few lines before the end of the
//! block that encloses it is carried to that end. A model can copy a contiguous region
//! into an edit; lines kept one here, one there, it cannot.
//!
//! What flows through: the lines of one output as read ([`Raw`]) and the entry's items
//! → the lines between anchors, appended as items, and the [`Segment`]s that keep them
//! (taken by the budget only once the lines at both ends are kept).

use std::ops::Range;

use super::acted::Acted;
use super::item::{Item, MAX_VERBATIM_BYTES};
use super::line_kind::LineKind;
use super::numbers::verbatim_line;
use super::text;

/// Most lines between two anchors of one region (lines acted on, or the definition that
/// encloses one of them) for the lines between to be kept. Anchors must also share their
/// definition, so this reaches from a `def` over its docstring to the first line acted
/// on in its body, not across definitions (measured on the shared traces: 3, 6, 10 and
/// 16 keep 696 to 702 of 726 spans; 16 the most).
pub(super) const MAX_GAP: usize = 16;
/// Most lines (not blank) a region is carried to reach the end of its block.
pub(super) const MAX_TAIL: usize = 3;
/// Most lines one region adds (its gaps and its tail together), so that one entry cannot
/// take a whole summary.
pub(super) const MAX_REGION_LINES: usize = 40;

/// A line of an output as read, so that a region can show it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Raw<'a> {
    /// Its place in the entry (as [`Item::order`]).
    pub(super) order: usize,
    /// Its line number, if known.
    pub(super) number: Option<usize>,
    /// The line as printed, without its own number.
    pub(super) code: &'a str,
    /// The width of its indent.
    pub(super) indent: usize,
    pub(super) kind: LineKind,
    /// The `order` of the definition that encloses it (none for an unindented line).
    pub(super) context: Option<usize>,
}

/// Lines of a region kept together, once the lines at its ends (its anchors) are kept.
#[derive(Debug, Clone)]
pub(super) struct Segment {
    /// The items at its ends (both the same for the tail of a region).
    pub(super) anchors: [usize; 2],
    /// Its lines: items appended to the digest for it, in order.
    pub(super) lines: Range<usize>,
    /// Other items of the same lines (a definition, an error line): kept with the
    /// segment, they are not shown again on their own.
    pub(super) absorbs: Vec<usize>,
    /// The region it belongs to (counted against [`MAX_REGION_LINES`]).
    pub(super) region: usize,
    /// How recently the agent acted on its anchors (the least recent of those acted on).
    pub(super) acted: Acted,
}

/// An anchor of a region: its order and its item.
#[derive(Clone, Copy)]
struct Anchor {
    order: usize,
    item: usize,
}

/// The segments of the hot regions of an entry whose lines are `raw` (in order), and
/// the items they show, appended to `items`.
pub(super) fn find<'a>(items: &mut Vec<Item<'a>>, raw: &[Raw<'a>]) -> Vec<Segment> {
    let anchors = anchors(items);
    let mut segments: Vec<Segment> = Vec::new();
    if anchors.is_empty() || raw.is_empty() {
        return segments;
    }
    // Items by order, to find those a segment's lines absorb.
    let mut by_order: Vec<(usize, usize)> = items
        .iter()
        .enumerate()
        .filter(|(_, it)| !it.region)
        .map(|(k, it)| (it.order, k))
        .collect();
    by_order.sort_unstable();
    let mut region = 0usize;
    let mut push = |items: &mut Vec<Item<'a>>, ends: [Anchor; 2], lines: &[Raw<'a>], region| {
        let start = items.len();
        let mut absorbs = Vec::new();
        for r in lines.iter().filter(|r| shown_in_region(r)) {
            let at = by_order.partition_point(|&(o, _)| o < r.order);
            absorbs.extend(
                by_order[at..]
                    .iter()
                    .take_while(|&&(o, _)| o == r.order)
                    .map(|&(_, k)| k),
            );
            let text = verbatim_line(r.number, r.code, MAX_VERBATIM_BYTES);
            items.push(Item {
                region: true,
                ..Item::line(r.kind, r.order, text)
            });
        }
        if items.len() > start {
            // Ranked after both anchors: by the least recent of them acted on.
            let acted = match (items[ends[0].item].acted, items[ends[1].item].acted) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
            segments.push(Segment {
                anchors: [ends[0].item, ends[1].item],
                lines: start..items.len(),
                absorbs,
                region,
                acted: acted.unwrap_or_default(),
            });
        }
    };
    for (k, pair) in anchors.windows(2).enumerate() {
        let (a, b) = (pair[0], pair[1]);
        match between(raw, a.order, b.order) {
            Some(lines) => push(items, [a, b], lines, region),
            None => {
                if let Some(lines) = tail(raw, a.order, Some(b.order)) {
                    push(items, [a, a], lines, region);
                }
                region += 1;
            }
        }
        if k + 2 == anchors.len()
            && let Some(lines) = tail(raw, b.order, None)
        {
            push(items, [b, b], lines, region);
        }
    }
    if let [only] = anchors[..]
        && let Some(lines) = tail(raw, only.order, None)
    {
        push(items, [only, only], lines, region);
    }
    segments
}

/// The anchors of an entry's regions, in order: its lines acted on and the definitions
/// that enclose them (when those are items).
fn anchors(items: &[Item<'_>]) -> Vec<Anchor> {
    let mut anchors: Vec<Anchor> = Vec::new();
    for (k, it) in items.iter().enumerate() {
        if it.acted.is_none() || it.region {
            continue;
        }
        anchors.push(Anchor {
            order: it.order,
            item: k,
        });
        let context = it
            .context
            .and_then(|o| items.iter().position(|d| d.order == o && !d.region));
        if let (Some(o), Some(item)) = (it.context, context) {
            anchors.push(Anchor { order: o, item });
        }
    }
    anchors.sort_unstable_by_key(|a| a.order);
    anchors.dedup_by_key(|a| a.order);
    anchors
}

/// Where the line of `order` is in `raw`.
fn at(raw: &[Raw<'_>], order: usize) -> Option<usize> {
    raw.binary_search_by_key(&order, |r| r.order).ok()
}

/// Whether a line is shown in a region (blank lines and markup are not).
fn shown_in_region(r: &Raw<'_>) -> bool {
    !matches!(r.kind, LineKind::Noise | LineKind::Status) && !text::trim(r.code).is_empty()
}

/// The lines strictly between anchors `a` and `b` if they belong to one region: at most
/// [`MAX_GAP`] lines apart, in the same definition (or `a` the definition around `b`),
/// and numbered without a break (or neither numbered).
fn between<'r, 'a>(raw: &'r [Raw<'a>], a: usize, b: usize) -> Option<&'r [Raw<'a>]> {
    let (i, j) = (at(raw, a)?, at(raw, b)?);
    let (ra, rb) = (raw.get(i)?, raw.get(j)?);
    if b - a > MAX_GAP + 1 {
        return None;
    }
    let related = ra.context == rb.context || rb.context == Some(a);
    let numbered = match (ra.number, rb.number) {
        (Some(x), Some(y)) => y.checked_sub(x) == Some(b - a),
        (None, None) => true,
        _ => false,
    };
    (related && numbered).then(|| raw.get(i + 1..j)).flatten()
}

/// The lines after `last` (an anchor) up to the end of the block that encloses it, if
/// that end is at most [`MAX_TAIL`] lines on and before `next` (the next anchor, if any): the
/// block ends at the first line indented no deeper than the definition that encloses
/// `last`. None if the output ends (or its numbering breaks) first.
fn tail<'r, 'a>(raw: &'r [Raw<'a>], last: usize, next: Option<usize>) -> Option<&'r [Raw<'a>]> {
    let i = at(raw, last)?;
    let r = raw.get(i)?;
    let def = raw.get(at(raw, r.context?)?)?;
    let mut shown = 0usize;
    for (k, line) in raw.iter().enumerate().skip(i + 1) {
        if next.is_some_and(|n| line.order >= n) || line.order != r.order + (k - i) {
            return None;
        }
        let numbered = match (r.number, line.number) {
            (Some(x), Some(y)) => y.checked_sub(x) == Some(k - i),
            (None, None) => true,
            _ => false,
        };
        if text::trim(line.code).is_empty() {
            continue; // a blank line
        }
        if !shown_in_region(line) || !numbered {
            return None; // markup (the output ends, or is cut), or a break in the numbers
        }
        if line.indent <= def.indent {
            return (shown > 0).then(|| raw.get(i + 1..k)).flatten();
        }
        shown += 1;
        if shown > MAX_TAIL {
            return None;
        }
    }
    None
}
