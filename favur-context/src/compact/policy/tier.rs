//! One tier of a policy: the usage at which it fires and what it does to each class.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::retention::Retention;

/// What a tier does to the compactable entries of one class.
///
/// Ordered by severity: `Keep < Summarize < Drop`.
///
/// ```
/// use favur_context::compact::Action;
/// assert!(Action::Keep < Action::Summarize && Action::Summarize < Action::Drop);
/// assert_eq!(serde_json::to_string(&Action::Summarize).unwrap(), "\"summarize\"");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Leave the entry as it is.
    Keep,
    /// Replace it, with its contiguous neighbours that are also summarized, by one summary.
    Summarize,
    /// Remove it from the view (it stays in the history, retrievable by id).
    Drop,
}

impl Action {
    /// The lowercase name (`"keep"`, `"summarize"`, `"drop"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Action::Keep => "keep",
            Action::Summarize => "summarize",
            Action::Drop => "drop",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One tier: the usage at which it fires and its row of the action table.
///
/// ```
/// use favur_context::compact::{Action, Tier};
/// use favur_context::Retention;
/// let tier = Tier::new(0.05, Action::Summarize, Action::Summarize, Action::Keep);
/// assert_eq!(tier.action(Retention::Strict), Action::Keep);
/// assert_eq!(tier.at, 0.05);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tier {
    /// Fires when usage (request tokens / window) reaches this fraction, in (0, 1].
    pub at: f64,
    /// What it does to forgettable entries.
    pub forgettable: Action,
    /// What it does to fuzzy entries.
    pub fuzzy: Action,
    /// What it does to strict entries.
    pub strict: Action,
}

impl Tier {
    /// A tier firing at `at` with the given action per class.
    pub const fn new(at: f64, forgettable: Action, fuzzy: Action, strict: Action) -> Self {
        Tier {
            at,
            forgettable,
            fuzzy,
            strict,
        }
    }

    /// The action for entries of `class`.
    ///
    /// ```
    /// use favur_context::compact::{Action, Tier};
    /// use favur_context::Retention;
    /// let t = Tier::new(0.1, Action::Drop, Action::Drop, Action::Summarize);
    /// assert_eq!(t.action(Retention::Fuzzy), Action::Drop);
    /// ```
    pub const fn action(&self, class: Retention) -> Action {
        match class {
            Retention::Forgettable => self.forgettable,
            Retention::Fuzzy => self.fuzzy,
            Retention::Strict => self.strict,
        }
    }
}
