//! What a plan does to each retention class: entries and tokens kept, summarized and
//! dropped.

use serde::Serialize;

use crate::model::retention::Retention;

/// Entries and tokens, one cell of a [`CompactionReport`](crate::compact::CompactionReport).
///
/// ```
/// use favur_context::compact::Plan;
/// use favur_context::{forgettable, fuzzy, History, Policy};
/// let mut h = History::new();
/// h.append(forgettable!(user: "{}", "spent ".repeat(20)));
/// h.append(fuzzy!(assistant: "ok"));
/// let dropped = Plan::new(&h, &Policy::default(), std::num::NonZeroU8::new(2).unwrap()).outcome().forgettable.dropped;
/// assert_eq!(dropped.entries, 1);
/// assert_eq!(dropped.tokens, u64::from(h.entries()[0].tokens()));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Figures {
    /// Number of view items.
    pub entries: u64,
    /// Their tokens (without framing): for summarized and dropped entries, what they held
    /// in the view before the compaction; for kept entries, what they hold after it (an
    /// entry the per-entry cap shortened counts with its capped tokens).
    pub tokens: u64,
}

impl Figures {
    pub(super) fn add(&mut self, tokens: u32) {
        self.entries += 1;
        self.tokens += u64::from(tokens);
    }
}

/// What a compaction did to the view items of one class.
///
/// An entry is *summarized* when its content went into a summary (even if its tool-call
/// part stays as [`Form::CallsOnly`](crate::render::Form::CallsOnly) or its result as a [`Form::Placeholder`](crate::render::Form::Placeholder)), *dropped*
/// when its content left the view without a summary, and *kept* otherwise (including
/// entries shortened by the per-entry cap).
///
/// ```
/// use favur_context::compact::Plan;
/// use favur_context::{forgettable, fuzzy, History, Policy};
/// let mut h = History::new();
/// h.append(fuzzy!(user: "{}", "a view ".repeat(300)));
/// h.append(forgettable!(user: "{}", "a listing ".repeat(300)));
/// h.append(fuzzy!(assistant: "ok")); // in flight
/// let o = Plan::new(&h, &Policy::default(), std::num::NonZeroU8::MIN).outcome().fuzzy;
/// // Each fuzzy entry counted once: the view summarized, the one in flight kept.
/// assert_eq!((o.summarized.entries, o.kept.entries, o.dropped.entries), (1, 1, 0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ClassOutcome {
    /// Left in the view as they were (or capped).
    pub kept: Figures,
    /// Replaced by a summary.
    pub summarized: Figures,
    /// Removed from the view (still in the history).
    pub dropped: Figures,
}

/// One value per retention class.
///
/// ```
/// use favur_context::compact::ByClass;
/// use favur_context::Retention;
/// let mut b = ByClass { forgettable: 1, fuzzy: 2, strict: 3 };
/// *b.get_mut(Retention::Fuzzy) += 1;
/// assert_eq!(*b.get(Retention::Fuzzy), 3);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ByClass<T> {
    /// For forgettable entries.
    pub forgettable: T,
    /// For fuzzy entries.
    pub fuzzy: T,
    /// For strict entries.
    pub strict: T,
}

impl<T> ByClass<T> {
    /// The value for `class`.
    ///
    /// ```
    /// use favur_context::compact::ByClass;
    /// use favur_context::Retention;
    /// assert_eq!(*ByClass { forgettable: 'a', fuzzy: 'b', strict: 'c' }.get(Retention::Strict), 'c');
    /// ```
    pub fn get(&self, class: Retention) -> &T {
        match class {
            Retention::Forgettable => &self.forgettable,
            Retention::Fuzzy => &self.fuzzy,
            Retention::Strict => &self.strict,
        }
    }

    /// The value for `class`, mutably.
    ///
    /// ```
    /// use favur_context::compact::ByClass;
    /// use favur_context::Retention;
    /// let mut b = ByClass { forgettable: 0, fuzzy: 0, strict: 0 };
    /// *b.get_mut(Retention::Forgettable) = 5;
    /// assert_eq!(b.forgettable, 5);
    /// ```
    pub fn get_mut(&mut self, class: Retention) -> &mut T {
        match class {
            Retention::Forgettable => &mut self.forgettable,
            Retention::Fuzzy => &mut self.fuzzy,
            Retention::Strict => &mut self.strict,
        }
    }
}
