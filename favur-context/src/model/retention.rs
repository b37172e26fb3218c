//! Retention classes: the one decision an append site makes.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How long the exact text of an entry must survive, chosen where it is appended.
///
/// The classes are ordered by how much they keep: `Forgettable < Fuzzy < Strict`.
/// Compaction reads nothing but this value to decide what to summarize or drop.
///
/// | class | the question the call site answers "yes" to | example |
/// |---|---|---|
/// | [`Forgettable`](Retention::Forgettable) | "Is this spent once the model has read it?" | a directory listing |
/// | [`Fuzzy`](Retention::Fuzzy) | "Would a summary of this do later on?" | a file view |
/// | [`Strict`](Retention::Strict) | "Will the exact text matter until the end?" | a stack trace, the plan |
///
/// There is deliberately no `Default` implementation: a class is always named.
///
/// ```
/// use favur_context::Retention;
///
/// assert!(Retention::Forgettable < Retention::Fuzzy);
/// assert!(Retention::Fuzzy < Retention::Strict);
/// assert_eq!("strict".parse::<Retention>(), Ok(Retention::Strict));
/// assert_eq!(Retention::Fuzzy.to_string(), "fuzzy");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Retention {
    /// Consumed once, then spent (a directory listing, a search hit list).
    Forgettable,
    /// The gist matters, the details can go (a file view, an intermediate step).
    Fuzzy,
    /// The exact text is needed until the end (a stack trace, the plan, a directive).
    Strict,
}

impl Retention {
    /// All classes, mildest retention first.
    ///
    /// ```
    /// use favur_context::Retention;
    /// assert_eq!(Retention::ALL.len(), 3);
    /// assert!(Retention::ALL.windows(2).all(|w| w[0] < w[1]));
    /// ```
    pub const ALL: [Retention; 3] = [Retention::Forgettable, Retention::Fuzzy, Retention::Strict];

    /// The lowercase name used in attributes, macros, files and reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            Retention::Forgettable => "forgettable",
            Retention::Fuzzy => "fuzzy",
            Retention::Strict => "strict",
        }
    }

    /// Position in [`Retention::ALL`] (0, 1 or 2), handy for per-class arrays.
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Retention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text given was not one of `forgettable`, `fuzzy`, `strict`.
///
/// ```
/// use favur_context::Retention;
/// let err = "stric".parse::<Retention>().unwrap_err();
/// assert_eq!(err.to_string(), "unknown retention class `stric`: expected one of `forgettable`, `fuzzy`, `strict`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown retention class `{given}`: expected one of `forgettable`, `fuzzy`, `strict`")]
pub struct ParseRetentionError {
    /// The text that failed to parse.
    pub given: String,
}

impl FromStr for Retention {
    type Err = ParseRetentionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "forgettable" => Ok(Retention::Forgettable),
            "fuzzy" => Ok(Retention::Fuzzy),
            "strict" => Ok(Retention::Strict),
            other => Err(ParseRetentionError {
                given: other.to_owned(),
            }),
        }
    }
}

/// Compile-time retention classes, one zero-sized type per [`Retention`] value.
///
/// The [`Class`](class::Class) trait is sealed: these three types are the only classes there
/// will ever be, so no code can invent a fourth.
///
/// ```
/// use favur_context::message::class::{Class, Forgettable, Fuzzy, Strict};
/// use favur_context::Retention;
///
/// fn retention_of<C: Class>() -> Retention { C::RETENTION }
/// assert_eq!(retention_of::<Strict>(), Retention::Strict);
/// assert_eq!(retention_of::<Fuzzy>(), Retention::Fuzzy);
/// assert_eq!(retention_of::<Forgettable>(), Retention::Forgettable);
/// ```
pub mod class {
    use super::Retention;

    mod sealed {
        pub trait Sealed {}
    }

    /// A compile-time retention class. Sealed: implemented only by [`Forgettable`],
    /// [`Fuzzy`] and [`Strict`].
    pub trait Class: sealed::Sealed + Copy + Send + Sync + 'static {
        /// The runtime value of this class.
        const RETENTION: Retention;
    }

    /// The compile-time form of [`Retention::Forgettable`].
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Forgettable;

    /// The compile-time form of [`Retention::Fuzzy`].
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Fuzzy;

    /// The compile-time form of [`Retention::Strict`].
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Strict;

    impl sealed::Sealed for Forgettable {}
    impl sealed::Sealed for Fuzzy {}
    impl sealed::Sealed for Strict {}
    impl Class for Forgettable {
        const RETENTION: Retention = Retention::Forgettable;
    }
    impl Class for Fuzzy {
        const RETENTION: Retention = Retention::Fuzzy;
    }
    impl Class for Strict {
        const RETENTION: Retention = Retention::Strict;
    }
}
