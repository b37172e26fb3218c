//! The ledger's timeline: the tokens each request carried, by band, and which items it
//! carried.
//!
//! A request is what the agent sends before each assistant message: the view as it stood
//! when that message was appended (after any compaction that ran just before). The
//! timeline keeps, per request, the tokens of the view by [`Band`] (O(1) memory per
//! request), and per item the times it entered and left the view, from which
//! [`Timeline::items_at`] derives the items of any request on demand.

use std::collections::HashMap;
use std::num::NonZeroU8;

use serde::Serialize;

use crate::model::entry::EntryId;
use crate::model::retention::Retention;

/// What a view item is, for the timeline's stacking: a pinned entry, an entry of each
/// class, or a summary.
///
/// ```
/// use favur_context::audit::Band;
/// use favur_context::Retention;
/// assert_eq!(Band::of(Retention::Fuzzy, false), Band::Fuzzy);
/// assert_eq!(Band::of(Retention::Fuzzy, true), Band::Pinned);
/// assert_eq!(Band::ALL.len(), 5);
/// assert_eq!(Band::Summary.label(), "summary");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Band {
    /// A pinned entry: in every request.
    Pinned,
    /// A strict entry.
    Strict,
    /// A fuzzy entry.
    Fuzzy,
    /// A forgettable entry.
    Forgettable,
    /// A summary a compaction wrote.
    Summary,
}

impl Band {
    /// Every band, in stacking order (bottom first).
    pub const ALL: [Band; 5] = [
        Band::Pinned,
        Band::Strict,
        Band::Fuzzy,
        Band::Forgettable,
        Band::Summary,
    ];

    /// The band of an entry of class `class`, pinned or not.
    pub fn of(class: Retention, pinned: bool) -> Band {
        match (pinned, class) {
            (true, _) => Band::Pinned,
            (false, Retention::Strict) => Band::Strict,
            (false, Retention::Fuzzy) => Band::Fuzzy,
            (false, Retention::Forgettable) => Band::Forgettable,
        }
    }

    /// Its name, as the inspector's legend shows it.
    pub fn label(self) -> &'static str {
        match self {
            Band::Pinned => "pinned",
            Band::Strict => "strict",
            Band::Fuzzy => "fuzzy",
            Band::Forgettable => "forgettable",
            Band::Summary => "summary",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One request on the timeline: the assistant entry it produced and the tokens of the
/// view it carried, by band ([`Band::ALL`] order).
///
/// ```
/// use favur_context::audit::{Band, Ledger};
/// use favur_context::{fuzzy, strict, History};
/// let mut h = History::new();
/// h.pin(strict!(system: "sys"));
/// h.append(fuzzy!(user: "hi"));
/// h.append(fuzzy!(assistant: "hello"));
/// let ledger = Ledger::of(&h);
/// let r = &ledger.timeline().requests()[0];
/// assert_eq!(r.at.0, 2);
/// assert!(r.tokens(Band::Pinned) > 0 && r.tokens(Band::Fuzzy) > 0);
/// assert_eq!(r.tokens(Band::Strict), 0);
/// assert_eq!(r.total(), r.tokens(Band::Pinned) + r.tokens(Band::Fuzzy));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequestPoint {
    /// The assistant entry this request produced.
    pub at: EntryId,
    /// Tokens of the view by band, in [`Band::ALL`] order.
    pub bands: [u64; 5],
}

impl RequestPoint {
    /// The tokens of one band.
    pub fn tokens(&self, band: Band) -> u64 {
        self.bands[band.index()]
    }

    /// The tokens of the whole view (the messages; framing and tool definitions aside).
    pub fn total(&self) -> u64 {
        self.bands.iter().sum()
    }
}

/// A compaction on the timeline: when it ran (the next entry id at the time) and its tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CompactionMark {
    /// The next entry id when it ran: it precedes the request producing that entry, if
    /// that entry is an assistant message.
    pub at: EntryId,
    /// Its tier.
    pub tier: NonZeroU8,
}

#[derive(Debug, Clone, Copy)]
struct Span {
    band: Band,
    tokens: u32,
    /// Where it stands in the view: an entry's own id, a summary's first replaced id.
    position: u64,
    entered: u64,
    left: Option<u64>,
}

/// What the ledger saw over time: every request with the tokens it carried by band, every
/// compaction with its tier, and which items were in any request
/// ([`Ledger::timeline`](super::Ledger::timeline)).
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    bands: [u64; 5],
    spans: HashMap<EntryId, Span>,
    requests: Vec<RequestPoint>,
    marks: Vec<CompactionMark>,
}

impl Timeline {
    /// Every request observed, in order.
    pub fn requests(&self) -> &[RequestPoint] {
        &self.requests
    }

    /// Every compaction observed, in order.
    pub fn compactions(&self) -> &[CompactionMark] {
        &self.marks
    }

    /// The items (entry and summary ids) the request producing entry `at` carried, in
    /// view order. O(items ever observed).
    ///
    /// ```
    /// use favur_context::audit::Ledger;
    /// use favur_context::compact::{Compaction, Edit};
    /// use favur_context::{forgettable, fuzzy, EntryId, History};
    /// let mut h = History::new();
    /// let mut ledger = Ledger::new();
    /// let ls = h.append(forgettable!(user: "a.rs b.rs"));
    /// h.append(fuzzy!(assistant: "two files"));
    /// ledger.observe(&h);
    /// h.apply(Compaction { tier: std::num::NonZeroU8::new(2).unwrap(), edits: vec![Edit::Drop { id: ls }], usage_after: None }).unwrap();
    /// ledger.observe(&h);
    /// let last = h.append(fuzzy!(assistant: "done"));
    /// ledger.observe(&h);
    /// assert_eq!(ledger.timeline().items_at(EntryId(1)), vec![ls]);
    /// assert_eq!(ledger.timeline().items_at(last), vec![EntryId(1)]);
    /// assert_eq!(ledger.timeline().compactions()[0].tier.get(), 2);
    /// ```
    pub fn items_at(&self, at: EntryId) -> Vec<EntryId> {
        let t = at.0;
        let mut items: Vec<(u64, u64)> = self
            .spans
            .iter()
            .filter(|(id, s)| id.0 < t && s.entered <= t && s.left.is_none_or(|l| l > t))
            .map(|(id, s)| (s.position, id.0))
            .collect();
        items.sort_unstable();
        items.into_iter().map(|(_, id)| EntryId(id)).collect()
    }

    pub(super) fn position(&self, id: EntryId) -> Option<u64> {
        self.spans.get(&id).map(|s| s.position)
    }

    pub(super) fn enter(&mut self, id: EntryId, band: Band, tokens: u32, position: u64, now: u64) {
        self.bands[band.index()] += u64::from(tokens);
        self.spans.insert(
            id,
            Span {
                band,
                tokens,
                position,
                entered: now,
                left: None,
            },
        );
    }

    pub(super) fn leave(&mut self, id: EntryId, now: u64) {
        if let Some(s) = self.spans.get_mut(&id)
            && s.left.is_none()
        {
            s.left = Some(now);
            self.bands[s.band.index()] -= u64::from(s.tokens);
        }
    }

    pub(super) fn retoken(&mut self, id: EntryId, tokens: u32) {
        if let Some(s) = self.spans.get_mut(&id)
            && s.left.is_none()
        {
            let band = &mut self.bands[s.band.index()];
            *band = *band - u64::from(s.tokens) + u64::from(tokens);
            s.tokens = tokens;
        }
    }

    pub(super) fn request(&mut self, at: EntryId) {
        self.requests.push(RequestPoint {
            at,
            bands: self.bands,
        });
    }

    pub(super) fn mark(&mut self, at: u64, tier: NonZeroU8) {
        self.marks.push(CompactionMark {
            at: EntryId(at),
            tier,
        });
    }
}
