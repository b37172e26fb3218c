//! Names worth keeping from text the summary does not quote: paths, file names,
//! `snake_case` and `CamelCase` symbols, dotted names, test ids, error names.

/// What a byte is, for names: bit flags, one table load per byte.
const NAME: u16 = 1;
const ALPHA: u16 = 2;
const DIGIT: u16 = 4;
const LOWER: u16 = 8;
const UPPER: u16 = 16;
/// `/`, `_`, `:`, `.` and `-`: the bytes that make a word more than letters and digits.
const MARK: u16 = 32;
/// `:`, the byte of `::` and `://`.
const COLON: u16 = 64;
/// `.`, the byte of dotted names.
const DOT: u16 = 128;
/// `_`, the byte of `snake_case`.
const UNDERSCORE: u16 = 256;
/// `/`, the byte of paths.
const SLASH: u16 = 512;

const CLASS: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c.is_ascii_lowercase() {
            NAME | ALPHA | LOWER
        } else if c.is_ascii_uppercase() {
            NAME | ALPHA | UPPER
        } else if c.is_ascii_digit() {
            NAME | DIGIT
        } else if c == b':' {
            NAME | MARK | COLON
        } else if c == b'.' {
            NAME | MARK | DOT
        } else if c == b'_' {
            NAME | MARK | UNDERSCORE
        } else if c == b'/' {
            NAME | MARK | SLASH
        } else if c == b'-' {
            NAME | MARK
        } else {
            0
        };
        b += 1;
    }
    t
};

/// Whether a byte makes a word worth reading as a name: a digit, an uppercase letter or
/// a mark. A word with none of them (lowercase letters only) is never a name.
fn is_trigger(b: u8) -> bool {
    CLASS[usize::from(b)] & (DIGIT | UPPER | MARK) != 0
}

/// Bytes read at a time by [`next_trigger`] and [`word_end`], as the bytes of a `u64`.
const WORD: usize = 8;
/// The low seven bits of every byte of a word.
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
/// The high bit of every byte of a word.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// `b` in every byte of a word.
const fn splat(b: u8) -> u64 {
    b as u64 * 0x0101_0101_0101_0101
}

/// The bytes of `w` from `lo` to `hi` (ASCII, `0 < lo <= hi < 0x80`), as the high bit of
/// each byte, where `low7` is `w & LOW7`: no carry crosses a byte, so a byte's sums tell
/// its own value only (and a byte of 0x80 or more reads as its low seven bits: the
/// caller drops those).
fn in_range(low7: u64, lo: u8, hi: u8) -> u64 {
    let at_least_lo = low7 + splat(0x80 - lo);
    let above_hi = low7 + splat(0x7f - hi);
    at_least_lo & !above_hi
}

/// The bytes of `w` that are [`is_trigger`] (`-./0-9:`, `A-Z`, `_`), as the high bit of
/// each byte.
fn trigger_bytes(w: u64) -> u64 {
    let low7 = w & LOW7;
    let marks = in_range(low7, b'-', b':') | in_range(low7, b'_', b'_');
    (marks | in_range(low7, b'A', b'Z')) & !w & HIGH
}

/// The bytes of `w` that are [`name_byte`] (`-./0-9:`, letters, `_`), as the high bit of
/// each byte.
fn name_bytes(w: u64) -> u64 {
    let low7 = w & LOW7;
    let marks = in_range(low7, b'-', b':') | in_range(low7, b'_', b'_');
    // `| 0x20` maps `A-Z` onto `a-z` and nothing else onto them.
    let letters = in_range(low7 | splat(0x20), b'a', b'z');
    (marks | letters) & !w & HIGH
}

/// The bytes of `bytes` at `i`, as a word (byte `i` lowest), if there are [`WORD`].
fn word_at(bytes: &[u8], i: usize) -> Option<u64> {
    let b = bytes.get(i..i + WORD)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

/// Where the first [`is_trigger`] byte of `bytes` from `i` on is, read a word at a time.
fn next_trigger(bytes: &[u8], mut i: usize) -> Option<usize> {
    while let Some(w) = word_at(bytes, i) {
        let found = trigger_bytes(w);
        if found != 0 {
            return Some(i + found.trailing_zeros() as usize / 8);
        }
        i += WORD;
    }
    bytes[i..]
        .iter()
        .position(|&b| is_trigger(b))
        .map(|k| i + k)
}

/// Where the name bytes from `i` on end (the first byte from `i` that is not
/// [`name_byte`], or the end of `bytes`), read a word at a time.
fn word_end(bytes: &[u8], mut i: usize) -> usize {
    while let Some(w) = word_at(bytes, i) {
        let other = !name_bytes(w) & HIGH;
        if other != 0 {
            return i + other.trailing_zeros() as usize / 8;
        }
        i += WORD;
    }
    i + bytes[i..].iter().take_while(|&&b| name_byte(b)).count()
}

/// Whether a byte can be part of a name.
fn name_byte(b: u8) -> bool {
    CLASS[usize::from(b)] & NAME != 0
}

/// [`is_name`] of a word of letters and digits only (`flags`: its bytes' classes, or-ed).
fn is_plain_name(b: &[u8], flags: u16) -> bool {
    if b.len() < 3 || b.len() > 160 || flags & ALPHA == 0 {
        return false;
    }
    let camel = flags & (LOWER | UPPER) == LOWER | UPPER
        && b.windows(2)
            .any(|x| x[0].is_ascii_lowercase() && x[1].is_ascii_uppercase());
    camel || flags & DIGIT != 0
}

/// Whether `w` (already trimmed) is a name worth listing.
#[cfg(test)]
pub(crate) fn is_name(w: &str) -> bool {
    let flags = w.bytes().fold(0u16, |f, b| f | CLASS[usize::from(b)]);
    is_marked_name(w.as_bytes(), flags)
}

/// [`is_name`] of `b`, where `flags` holds the classes of the bytes of `b` and maybe of
/// `.`, `/`, `-` and `:` bytes around it (a class missing from `flags` is not in `b`;
/// letters, digits and `_` are in `b` if in `flags`).
fn is_marked_name(b: &[u8], flags: u16) -> bool {
    if b.len() < 3 || b.len() > 160 || flags & ALPHA == 0 {
        return false;
    }
    let colon = flags & COLON != 0 && b.contains(&b':');
    if colon && b.windows(3).any(|x| x == b"://") {
        return false; // URLs are rarely what the work refers back to
    }
    if (flags & UNDERSCORE != 0) || (flags & SLASH != 0 && b.contains(&b'/')) {
        return true;
    }
    if colon && b.windows(2).any(|x| x == b"::") {
        return true;
    }
    if b.len() >= 4
        && flags & DOT != 0
        && b.windows(3)
            .any(|x| x[1] == b'.' && x[0].is_ascii_alphanumeric() && x[2].is_ascii_alphanumeric())
    {
        return true;
    }
    if flags & (LOWER | UPPER) == LOWER | UPPER
        && b.windows(2)
            .any(|x| x[0].is_ascii_lowercase() && x[1].is_ascii_uppercase())
    {
        return true;
    }
    // `E015`, `utf8`, `py39`: a letter and a digit.
    flags & DIGIT != 0 && b.iter().all(u8::is_ascii_alphanumeric)
}

/// The names of a text, in order of appearance (with repeats).
pub(crate) fn names(text: &str) -> Names<'_> {
    Names { text, i: 0 }
}

/// The iterator of [`names`]: where the scan of `text` is.
#[derive(Debug, Clone)]
pub(crate) struct Names<'a> {
    text: &'a str,
    i: usize,
}

impl<'a> Iterator for Names<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let text = self.text;
        let bytes = text.as_bytes();
        let mut i = self.i;
        let found = loop {
            if i >= bytes.len() {
                break None;
            }
            // Only a word with a digit, an uppercase letter or a mark can be a name: skip
            // to the next such byte (eight bytes at a time, no word boundaries to branch
            // on), then back to the start of its word (`i` is not inside a word).
            let Some(trigger) = next_trigger(bytes, i) else {
                i = bytes.len();
                break None;
            };
            let mut start = trigger;
            while start > i && name_byte(bytes[start - 1]) {
                start -= 1;
            }
            i = word_end(bytes, trigger);
            if i - start < 3 {
                continue; // no name is shorter (`1`, `42`, `-`, `A`)
            }
            let flags = bytes[start..i]
                .iter()
                .fold(0u16, |f, &b| f | CLASS[usize::from(b)]);
            if flags & MARK == 0 {
                // Letters and digits only: nothing to trim, no path, URL or dotted name.
                if is_plain_name(&bytes[start..i], flags)
                    && let Some(word) = text.get(start..i)
                {
                    break Some(word);
                }
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
            if is_marked_name(&bytes[from..to], flags) {
                // Name bytes are ASCII, so these are character boundaries.
                if let Some(word) = text.get(from..to) {
                    break Some(word);
                }
            }
        };
        self.i = i;
        found
    }
}

/// The names of an entry's texts, in order of appearance (with repeats: the summary
/// skips a name already shown, and lists each name it does not skip, so a repeat is
/// always skipped), read a line at a time as they are asked for (a summary lists only
/// the first few); a fence line (```` ``` ````) has none.
#[derive(Debug)]
pub(crate) struct EntryNames<'a> {
    texts: std::vec::IntoIter<&'a str>,
    lines: super::lines::TextLines<'a>,
    line: Names<'a>,
}

impl<'a> EntryNames<'a> {
    /// The names of `texts`, in this order.
    pub(crate) fn new(texts: Vec<&'a str>) -> Self {
        EntryNames {
            texts: texts.into_iter(),
            lines: super::lines::text_lines(""),
            line: names(""),
        }
    }

    /// No more names: the rest are not asked for.
    pub(crate) fn stop(&mut self) {
        self.texts = Vec::new().into_iter();
        self.lines = super::lines::text_lines("");
        self.line = names("");
    }

    /// The next text or line to read names from, if any: a text without a fence is read
    /// whole (no name spans a line break), one with a fence line by line.
    fn next_span(&mut self) -> Option<&'a str> {
        loop {
            match self.lines.next() {
                Some(line) if super::lines::trim_start(line).starts_with("```") => {}
                Some(line) => return Some(line),
                None => {
                    let text = self.texts.next()?;
                    if super::producers::find_fence(text).is_none() {
                        return Some(text);
                    }
                    self.lines = super::lines::text_lines(text);
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

/// Names already shown in a summary, so that each is listed once. A name counts as shown
/// when it appeared as a whole word of shown text.
#[derive(Debug, Default)]
pub(crate) struct Shown<'s> {
    seen: foldhash::HashSet<&'s str>,
}

impl<'s> Shown<'s> {
    /// Room for `n` names before the set grows.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Shown {
            seen: foldhash::HashSet::with_capacity_and_hasher(n, Default::default()),
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

    /// The names scan as it was written before its byte table (several passes per word,
    /// substring searches): the fast one must find exactly the same names.
    fn names_by_passes(text: &str) -> Vec<&str> {
        let is_byte =
            |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-' | b':');
        let is = |w: &str| {
            let b = w.as_bytes();
            if b.len() < 3
                || b.len() > 160
                || !b.iter().any(u8::is_ascii_alphabetic)
                || w.contains("://")
            {
                return false;
            }
            b.contains(&b'/')
                || b.contains(&b'_')
                || w.contains("::")
                || (b.len() >= 4
                    && b.windows(3).any(|x| {
                        x[1] == b'.' && x[0].is_ascii_alphanumeric() && x[2].is_ascii_alphanumeric()
                    }))
                || b.windows(2)
                    .any(|x| x[0].is_ascii_lowercase() && x[1].is_ascii_uppercase())
                || (b.iter().any(u8::is_ascii_digit) && b.iter().all(u8::is_ascii_alphanumeric))
        };
        let bytes = text.as_bytes();
        let (mut out, mut i) = (Vec::new(), 0);
        while i < bytes.len() {
            while i < bytes.len() && !is_byte(bytes[i]) {
                i += 1;
            }
            let start = i;
            while i < bytes.len() && is_byte(bytes[i]) {
                i += 1;
            }
            let w = text[start..i].trim_matches(|c| matches!(c, '.' | '/' | '-' | ':'));
            if start < i && is(w) {
                out.push(w);
            }
        }
        out
    }

    #[test]
    fn the_byte_table_finds_what_the_passes_found() {
        let fixed = [
            "File \"django/db/models/query.py\", line 42: QuerySet.filter() at https://x.org/a",
            "::a ab:: a::b x://y .a.b. -abc- E015 e1 ab1 abc aBc ABC a.b a.bc /x/ __ :::",
            "src/lib.rs:42:9 getAttr py39 utf-8 naïve_name ünïcode::path 1234 -- ... ://",
        ];
        let alphabet = b"aZ9_./-: x\n\xc3";
        let mut rng = fastrand::Rng::with_seed(0x2545_f491_4f6c_dd1d);
        let mut generated = Vec::new();
        for _ in 0..2_000 {
            let mut s = Vec::new();
            for _ in 0..rng.usize(0..40) {
                s.push(alphabet[rng.usize(0..alphabet.len())]);
            }
            generated.push(String::from_utf8_lossy(&s).into_owned());
        }
        for text in fixed
            .iter()
            .copied()
            .chain(generated.iter().map(String::as_str))
        {
            assert_eq!(
                names(text).collect::<Vec<_>>(),
                names_by_passes(text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn words_read_a_word_at_a_time_find_what_bytes_find() {
        // Every byte value, at every offset of every length up to 70 (the words of eight
        // bytes and their edges), each test around it.
        let mut rng = fastrand::Rng::with_seed(0x51af_d7ed_558c_cd71);
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for n in 0..=70usize {
            for b in 0..=255u8 {
                for at in [0, n / 2, n.saturating_sub(1)] {
                    let mut t = vec![b' '; n];
                    if n > 0 {
                        t[at] = b;
                    }
                    texts.push(t.clone());
                    t.iter_mut().for_each(|x| *x = b'q');
                    if n > 0 {
                        t[at] = b;
                    }
                    texts.push(t);
                }
            }
            for _ in 0..200 {
                texts.push((0..n).map(|_| rng.u8(..)).collect());
            }
        }
        for t in &texts {
            for i in 0..=t.len() {
                assert_eq!(
                    next_trigger(t, i),
                    t[i..].iter().position(|&b| is_trigger(b)).map(|k| i + k),
                    "{t:?} from {i}"
                );
                assert_eq!(
                    word_end(t, i),
                    i + t[i..].iter().take_while(|&&b| name_byte(b)).count(),
                    "{t:?} from {i}"
                );
            }
        }
    }

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
