//! Names worth keeping from text the summary does not quote: paths, file names,
//! `snake_case` and `CamelCase` symbols, dotted names, test ids, error names.

use std::collections::HashSet;

/// Whether a byte can be part of a name, by byte (one load instead of five compares).
const NAME_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'-' | b':');
        b += 1;
    }
    t
};

/// Whether a byte can be part of a name.
fn name_byte(b: u8) -> bool {
    NAME_BYTE[usize::from(b)]
}

/// Whether `w` (already trimmed) is a name worth listing.
pub(crate) fn is_name(w: &str) -> bool {
    let b = w.as_bytes();
    if b.len() < 3 || b.len() > 160 || !b.iter().any(u8::is_ascii_alphabetic) {
        return false;
    }
    // One pass for what the substring searches `"://"` and `"::"` would find.
    let (mut url, mut path) = (false, false);
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'/' | b'_' => path = true,
            b':' if b.get(i + 1) == Some(&b':') => path = true,
            b':' if b.get(i + 1) == Some(&b'/') && b.get(i + 2) == Some(&b'/') => url = true,
            _ => {}
        }
    }
    if url {
        return false; // URLs are rarely what the work refers back to
    }
    if path {
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
            let (mut from, mut to) = (start, i);
            let edge = |b: u8| matches!(b, b'.' | b'/' | b'-' | b':');
            while from < to && edge(bytes[from]) {
                from += 1;
            }
            while to > from && edge(bytes[to - 1]) {
                to -= 1;
            }
            let word = text.get(from..to).unwrap_or("");
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
