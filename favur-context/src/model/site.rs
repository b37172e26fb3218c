//! Where an entry was classified and appended.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// The source location (file, line, column) of the code that classified an entry, so any
/// message in a history can be traced back to the line that chose its class.
///
/// The constructor macros record their own invocation; [`History::append`](crate::History::append)
/// records its caller for values classified by type.
///
/// ```
/// use favur_context::message::CallSite;
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
    /// let site = favur_context::message::CallSite::from_parts("import:openai".to_owned(), 3, 1);
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
    /// let site = favur_context::message::CallSite::caller();
    /// assert_eq!(site.line(), line!() - 1);
    /// ```
    #[track_caller]
    pub fn caller() -> Self {
        let loc = std::panic::Location::caller();
        CallSite::new(loc.file(), loc.line(), loc.column())
    }

    /// The source file.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The line, starting at 1.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The column, starting at 1.
    pub fn column(&self) -> u32 {
        self.column
    }
}

impl fmt::Display for CallSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// A [`CallSite`] as an entry holds it: one pointer, shared by every entry a history
/// recorded from the same site (a history records most of its entries from a handful of
/// sites). Reads, compares, shows and serializes as the `CallSite` it holds.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct Site(Arc<CallSite>);

impl Site {
    /// The site shared with `known` when it holds an equal one, else a new one.
    pub(crate) fn new(site: CallSite, known: &Sites) -> Site {
        match known.0.get(&site) {
            Some(shared) => Site(Arc::clone(shared)),
            None => Site(Arc::new(site)),
        }
    }
}

impl Deref for Site {
    type Target = CallSite;

    fn deref(&self) -> &CallSite {
        &self.0
    }
}

impl From<CallSite> for Site {
    fn from(site: CallSite) -> Self {
        Site(Arc::new(site))
    }
}

as_held_value!(Site => CallSite);

/// The distinct sites a history's entries were recorded from, each held once. Bounded:
/// past [`Sites::MAX`] distinct sites (data naming a new site per entry), new ones are
/// no longer shared, so the table never grows with such data.
#[derive(Clone, Default)]
pub(crate) struct Sites(foldhash::HashSet<Arc<CallSite>>);

impl Sites {
    /// The most distinct sites held.
    const MAX: usize = 4096;

    /// Makes `site` share the equal site already held, or holds it for the entries to come.
    pub(crate) fn share(&mut self, site: &mut Site) {
        match self.0.get(&*site.0) {
            Some(shared) if !Arc::ptr_eq(shared, &site.0) => site.0 = Arc::clone(shared),
            Some(_) => {}
            None if self.0.len() < Self::MAX => {
                self.0.insert(Arc::clone(&site.0));
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_sites_are_held_once_and_the_table_is_bounded() {
        let mut sites = Sites::default();
        let mut a = Site::from(CallSite::new("a.rs", 1, 1));
        sites.share(&mut a);
        let b = Site::new(CallSite::new("a.rs", 1, 1), &sites);
        assert!(Arc::ptr_eq(&a.0, &b.0));
        let mut c = Site::from(CallSite::from_parts("a.rs".into(), 1, 1));
        sites.share(&mut c);
        assert!(Arc::ptr_eq(&a.0, &c.0));
        assert_eq!(*c, CallSite::new("a.rs", 1, 1));
        for line in 0..(Sites::MAX as u32 + 10) {
            sites.share(&mut Site::from(CallSite::new("b.rs", line, 1)));
        }
        assert_eq!(sites.0.len(), Sites::MAX);
        assert_eq!(std::mem::size_of::<Site>(), 8);
    }
}
