//! A candidate line of one entry ([`Item`]), as the entry's reading, its regions, its
//! grouped hits and the budget pass it along.

use std::borrow::Cow;

use super::acted::Acted;
use super::line_kind::LineKind;

/// Longest acted-on line kept, in bytes (a longer one is cut with `…`).
pub(super) const MAX_VERBATIM_BYTES: usize = 400;

/// A candidate line of one entry.
pub(super) struct Item<'a> {
    pub(super) kind: LineKind,
    /// Position in the entry (lines are shown in this order).
    pub(super) order: usize,
    /// What is shown (borrowed from the entry when shown as it is).
    pub(super) text: Cow<'a, str>,
    /// Whether, and how recently, the agent acted on the line since: it is then shown
    /// verbatim, with its line number.
    pub(super) acted: Option<Acted>,
    /// The `order` of the definition that encloses the line (an acted line shows it as
    /// its context), or that a doc line documents.
    pub(super) context: Option<usize>,
    /// A line of a hot region (between lines acted on, or after them to the end of their
    /// block): kept only with its segment, never by its kind.
    pub(super) region: bool,
    /// How deeply the definition of a definition or doc line is nested (0: at the top of
    /// its file); 0 for other lines. A skeleton offers the outermost first.
    pub(super) depth: u8,
    /// For a doc line: the index (among the entry's items) of the definition it
    /// documents; it is offered only once that is kept.
    pub(super) of: Option<usize>,
}

impl<'a> Item<'a> {
    /// A line of `kind` at `order`, shown as `text`, kept by its kind (not acted on).
    pub(super) fn line(kind: LineKind, order: usize, text: Cow<'a, str>) -> Self {
        Item {
            kind,
            order,
            text,
            acted: None,
            context: None,
            region: false,
            depth: 0,
            of: None,
        }
    }
}
