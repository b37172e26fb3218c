//! Names worth keeping from text the summary does not quote: paths, file names,
//! `snake_case` and `CamelCase` symbols, dotted names, test ids, error names.

use std::collections::HashSet;

/// Whether a byte can be part of a name.
fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-' | b':')
}

/// Whether `w` (already trimmed) is a name worth listing.
pub(crate) fn is_name(w: &str) -> bool {
    let b = w.as_bytes();
    if b.len() < 3 || b.len() > 160 || !b.iter().any(u8::is_ascii_alphabetic) {
        return false;
    }
    if w.contains("://") {
        return false; // URLs are rarely what the work refers back to
    }
    if b.contains(&b'/') || b.contains(&b'_') || w.contains("::") {
        return true;
    }
    if b.len() >= 4
        && b.windows(3)
            .any(|x| x[1] == b'.' && x[0].is_ascii_alphanumeric() && x[2].is_ascii_alphanumeric())
    {
        return true;
    }
    if b.windows(2)
        .any(|x| x[0].is_ascii_lowercase() && x[1].is_ascii_uppercase())
    {
        return true;
    }
    // `E015`, `utf8`, `py39`: a letter and a digit.
    b.iter().any(u8::is_ascii_digit) && b.iter().all(u8::is_ascii_alphanumeric)
}

/// The names of a text, in order of appearance (with repeats).
pub(crate) fn names(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            while i < bytes.len() && !name_byte(bytes[i]) {
                i += 1;
            }
            let start = i;
            while i < bytes.len() && name_byte(bytes[i]) {
                i += 1;
            }
            if start == i {
                continue;
            }
            // Name bytes are ASCII, so these are character boundaries.
            let word = text
                .get(start..i)
                .unwrap_or("")
                .trim_matches(|c| matches!(c, '.' | '/' | '-' | ':'));
            if is_name(word) {
                return Some(word);
            }
        }
        None
    })
}

/// Names already shown in a summary, so that each is listed once. A name counts as shown
/// when it appeared as a whole word of shown text.
#[derive(Debug, Default)]
pub(crate) struct Shown {
    seen: HashSet<String>,
}

impl Shown {
    /// Records every name of `text` as shown.
    pub(crate) fn add_text(&mut self, text: &str) {
        for n in names(text) {
            if !self.seen.contains(n) {
                self.seen.insert(n.to_owned());
            }
        }
    }

    /// Whether `name` was shown.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.seen.contains(name)
    }

    /// Records one name as shown; whether it was new.
    pub(crate) fn insert(&mut self, name: &str) -> bool {
        if self.seen.contains(name) {
            return false;
        }
        self.seen.insert(name.to_owned());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_code_and_logs() {
        let found: Vec<&str> = names(
            "File \"django/db/models/query.py\", line 42: QuerySet.filter() calls get_ordering; E015 in models.E015 at https://x.org/a",
        )
        .collect();
        assert_eq!(
            found,
            vec![
                "django/db/models/query.py",
                "QuerySet.filter",
                "get_ordering",
                "E015",
                "models.E015"
            ]
        );
        assert!(is_name("parse::tests::nested"));
        assert!(is_name("getAttr"));
        assert!(!is_name("the"));
        assert!(!is_name("1234"));
        assert!(!is_name("Hello"));
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
