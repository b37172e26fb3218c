//! Where an entry was classified and appended.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;

/// The source location (file, line, column) of the code that classified an entry, so any
/// message in a history can be traced back to the line that chose its class.
///
/// The constructor macros record their own invocation; [`History::append`](crate::History::append)
/// records its caller for values classified by type.
///
/// ```
/// use favur_context::CallSite;
/// let here = CallSite::caller();
/// assert_eq!(here.line(), line!() - 1);
/// assert!(here.file().ends_with(".rs"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CallSite {
    file: Cow<'static, str>,
    line: u32,
    column: u32,
}

impl CallSite {
    /// A call site from its parts (what `file!()`, `line!()` and `column!()` give).
    ///
    /// ```
    /// let site = favur_context::CallSite::new(file!(), line!(), column!());
    /// assert!(site.line() > 0);
    /// ```
    pub const fn new(file: &'static str, line: u32, column: u32) -> Self {
        CallSite {
            file: Cow::Borrowed(file),
            line,
            column,
        }
    }

    /// A call site with an owned file name, for sites read back from data.
    ///
    /// ```
    /// let site = favur_context::CallSite::from_parts("import:openai".to_owned(), 3, 1);
    /// assert_eq!(site.to_string(), "import:openai:3:1");
    /// ```
    pub fn from_parts(file: String, line: u32, column: u32) -> Self {
        CallSite {
            file: Cow::Owned(file),
            line,
            column,
        }
    }

    /// The location of the caller of the function this is called from (through
    /// `#[track_caller]`).
    ///
    /// ```
    /// let site = favur_context::CallSite::caller();
    /// assert_eq!(site.line(), line!() - 1);
    /// ```
    #[track_caller]
    pub fn caller() -> Self {
        let loc = std::panic::Location::caller();
        CallSite::new(loc.file(), loc.line(), loc.column())
    }

    /// The source file.
    ///
    /// ```
    /// assert_eq!(favur_context::CallSite::new("a.rs", 1, 2).file(), "a.rs");
    /// ```
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The line, starting at 1.
    ///
    /// ```
    /// assert_eq!(favur_context::CallSite::new("a.rs", 1, 2).line(), 1);
    /// ```
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The column, starting at 1.
    ///
    /// ```
    /// assert_eq!(favur_context::CallSite::new("a.rs", 1, 2).column(), 2);
    /// ```
    pub fn column(&self) -> u32 {
        self.column
    }
}

impl fmt::Display for CallSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}
