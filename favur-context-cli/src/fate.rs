//! Where a tool output was in the view of a request: what the reference and span
//! measures record for every source they look up.

/// Where the source of a reference was in the view of the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fate {
    /// In the view as recorded (or capped).
    Verbatim,
    /// Replaced by a summary that is in the view.
    Summarized,
    /// Shown as a placeholder (its call stays, its content went).
    Placeholder,
    /// Not in the view at all.
    Dropped,
}
