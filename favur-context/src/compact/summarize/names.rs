//! Names of an entry and of a summary: those of an entry's texts, read as a summary asks
//! for them, and those a summary already shows (each is listed once).

use super::name_scan::{Names, names};
use super::numbers::is_kept_verbatim;

/// The names of an entry's texts, in order of appearance (with repeats: the summary
/// skips a name already shown, and lists each name it does not skip, so a repeat is
/// always skipped), read a line at a time as they are asked for (a summary lists only
/// the first few); a fence line (```` ``` ````) has none.
#[derive(Debug)]
pub(crate) struct EntryNames<'a> {
    texts: std::vec::IntoIter<&'a str>,
    lines: super::text::TextLines<'a>,
    line: Names<'a>,
}

impl<'a> EntryNames<'a> {
    /// The names of `texts`, in this order.
    pub(crate) fn new(texts: Vec<&'a str>) -> Self {
        EntryNames {
            texts: texts.into_iter(),
            lines: super::text::text_lines(""),
            line: names(""),
        }
    }

    /// No more names: the rest are not asked for.
    pub(crate) fn stop(&mut self) {
        self.texts = Vec::new().into_iter();
        self.lines = super::text::text_lines("");
        self.line = names("");
    }

    /// The next text or line to read names from, if any: a text without a fence is read
    /// whole (no name spans a line break), one with a fence line by line.
    fn next_span(&mut self) -> Option<&'a str> {
        loop {
            match self.lines.next() {
                Some(line) if super::text::trim_start(line).starts_with("```") => {}
                Some(line) => return Some(line),
                None => {
                    let text = self.texts.next()?;
                    if super::producers::find_fence(text).is_none() {
                        return Some(text);
                    }
                    self.lines = super::text::text_lines(text);
                }
            }
        }
    }
}

impl<'a> Iterator for EntryNames<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        loop {
            match self.line.next() {
                Some(n) => return Some(n),
                None => self.line = names(self.next_span()?),
            }
        }
    }
}

/// Names already shown in a summary, so that each is listed once (and the numbered lines
/// of a file kept, so that each is kept once: see `add_line`). A name counts as shown
/// when it appeared as a whole word of shown text.
#[derive(Debug, Default)]
pub(crate) struct Shown<'s> {
    seen: foldhash::HashSet<&'s str>,
    /// Numbered lines kept, with the key of the entry they were kept for, and the
    /// index of that entry's digest.
    lines: foldhash::HashMap<(&'s str, &'s str), usize>,
}

impl<'s> Shown<'s> {
    /// Room for `n` names before the set grows.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Shown {
            seen: foldhash::HashSet::with_capacity_and_hasher(n, Default::default()),
            lines: foldhash::HashMap::default(),
        }
    }

    /// Records `line` as kept for the entry of digest `at`, whose key is `key`, if it is
    /// a numbered line (`601| code`) and there is a key.
    pub(crate) fn add_line(&mut self, key: Option<&'s str>, line: &'s str, at: usize) {
        if let Some(key) = key.filter(|_| is_kept_verbatim(line)) {
            self.lines.entry((key, line)).or_insert(at);
        }
    }

    /// The digest `line` is already kept for, if it is a numbered line kept for an entry
    /// with the same `key`: the same line of the same file, kept once per summary.
    pub(crate) fn holder(&self, key: Option<&str>, line: &str) -> Option<usize> {
        match key {
            Some(key) if !self.lines.is_empty() && is_kept_verbatim(line) => {
                self.lines.get(&(key, line)).copied()
            }
            _ => None,
        }
    }

    /// Records every name of `text` as shown.
    pub(crate) fn add_text(&mut self, text: &'s str) {
        self.seen.extend(names(text));
    }

    /// Whether `name` was shown.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.seen.contains(name)
    }

    /// Records one name as shown; whether it was new.
    pub(crate) fn insert(&mut self, name: &'s str) -> bool {
        self.seen.insert(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_numbered_line_is_kept_once_per_key() {
        let mut s = Shown::default();
        s.add_line(Some("a.py"), "12| x = 1", 3);
        s.add_line(Some("a.py"), "12| x = 1", 5); // the first holder stays
        s.add_line(Some("a.py"), "| x = 1", 3); // not numbered: not recorded
        s.add_line(None, "13| y = 2", 3); // no key: not recorded
        assert_eq!(s.holder(Some("a.py"), "12| x = 1"), Some(3));
        assert_eq!(s.holder(Some("b.py"), "12| x = 1"), None);
        assert_eq!(s.holder(Some("a.py"), "| x = 1"), None);
        assert_eq!(s.holder(Some("a.py"), "13| y = 2"), None);
        assert_eq!(s.holder(None, "12| x = 1"), None);
    }

    #[test]
    fn shown_names_are_listed_once() {
        let mut s = Shown::default();
        s.add_text("see src/a.rs and get_x");
        assert!(s.contains("src/a.rs"));
        assert!(s.contains("get_x"));
        assert!(!s.insert("get_x"));
        assert!(s.insert("get_y"));
    }
}
