//! The lines and words of a text, read byte by byte where the std would build a
//! searcher or decode characters: line splitting, trimming, whitespace tests, substring
//! search. What the summarizer's line readers ([`super::line_kind`],
//! [`super::error_words`]) stand on.

/// The lines of a text, as [`str::lines`] gives them (split at `\n`, a `\r` before it
/// dropped), each line break found with `memchr`.
#[derive(Debug, Clone)]
pub(crate) struct TextLines<'a> {
    /// What is left to split; `None` once the last line was given.
    rest: Option<&'a str>,
}

/// The lines of `text` (see [`TextLines`]).
pub(crate) fn text_lines(text: &str) -> TextLines<'_> {
    TextLines {
        rest: (!text.is_empty()).then_some(text),
    }
}

impl<'a> Iterator for TextLines<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        let Some(nl) = memchr::memchr(b'\n', rest.as_bytes()) else {
            self.rest = None;
            return Some(rest);
        };
        // `\n` is ASCII: `nl` and `nl + 1` are character boundaries.
        let line = &rest[..nl];
        let after = &rest[nl + 1..];
        self.rest = (!after.is_empty()).then_some(after);
        Some(line.strip_suffix('\r').unwrap_or(line))
    }
}

/// Whether `b` is an ASCII character that is whitespace ([`char::is_whitespace`]: tab,
/// line feed, vertical tab, form feed, carriage return, space).
pub(crate) fn is_ascii_space(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | b' ')
}

/// [`is_ascii_space`] as 0 or 1, without a branch (two range tests a vector compare
/// does many at a time).
fn ascii_space(b: u8) -> u8 {
    u8::from(b.wrapping_sub(b'\t') < 5) | u8::from(b == b' ')
}

/// Whether `s` holds a character that is whitespace ([`char::is_whitespace`]), read
/// 16 bytes at a time while `s` is ASCII.
pub(crate) fn has_whitespace(s: &str) -> bool {
    has_ascii_space(s.as_bytes()) || (!s.is_ascii() && s.contains(char::is_whitespace))
}

/// Whether `b` holds an ASCII whitespace byte ([`is_ascii_space`]): each block of 16
/// bytes tested without a branch per byte, then the rest byte by byte.
fn has_ascii_space(b: &[u8]) -> bool {
    let mut blocks = b.chunks_exact(16);
    for block in &mut blocks {
        if block.iter().fold(0, |any, &c| any | ascii_space(c)) != 0 {
            return true;
        }
    }
    blocks.remainder().iter().any(|&c| is_ascii_space(c))
}

/// Whether `b` is a byte that starts or ends `s` as it is after [`trim`]: ASCII, not
/// whitespace.
pub(crate) fn ascii_kept(b: u8) -> bool {
    b < 0x80 && !is_ascii_space(b)
}

/// [`str::trim_start`], reading ASCII whitespace byte by byte.
pub(crate) fn trim_start(s: &str) -> &str {
    if s.as_bytes().first().is_none_or(|&b| ascii_kept(b)) {
        return s; // most lines start with a character that stays
    }
    let skip = s.bytes().take_while(|&b| is_ascii_space(b)).count();
    // ASCII bytes end characters: `skip` is a character boundary.
    let rest = &s[skip..];
    match rest.as_bytes().first() {
        Some(&b) if b >= 0x80 => rest.trim_start(),
        _ => rest,
    }
}

/// [`str::trim`], reading ASCII whitespace byte by byte.
pub(crate) fn trim(s: &str) -> &str {
    if let (Some(&first), Some(&last)) = (s.as_bytes().first(), s.as_bytes().last())
        && ascii_kept(first)
        && ascii_kept(last)
    {
        return s; // most lines are trimmed already
    }
    let t = trim_start(s);
    let keep = t.len() - t.bytes().rev().take_while(|&b| is_ascii_space(b)).count();
    let rest = &t[..keep];
    match rest.as_bytes().last() {
        Some(&b) if b >= 0x80 => rest.trim_end(),
        _ => rest,
    }
}

/// The last word of `t` (after its last whitespace character), read byte by byte while
/// the end of `t` is ASCII.
pub(crate) fn last_word(t: &str) -> &str {
    let b = t.as_bytes();
    let mut i = b.len();
    while i > 0 {
        match b[i - 1] {
            b'\t'..=b'\r' | b' ' => return &t[i..],
            0x80.. => return t.rsplit(char::is_whitespace).next().unwrap_or(t),
            _ => i -= 1,
        }
    }
    t
}

/// Where `needle` first occurs in `hay`, as [`str::find`] finds it: each place of its
/// first byte found with `memchr`, then compared (`str::find` builds a substring
/// searcher for each call, which costs more than a short line's search).
pub(crate) fn find_str(hay: &str, needle: &str) -> Option<usize> {
    let (hay, needle) = (hay.as_bytes(), needle.as_bytes());
    let Some((&first, rest)) = needle.split_first() else {
        return Some(0);
    };
    memchr::memchr_iter(first, hay).find(|&i| hay[i + 1..].starts_with(rest))
}

/// Random lines from `pieces`, cut to every length up to 70 bytes at times (blocks of 16
/// and their edges), from a fixed seed: the input of the tests that compare a fast
/// reader with the std's.
#[cfg(test)]
pub(crate) fn random_lines(pieces: &[&[u8]], count: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..count)
        .map(|_| {
            let mut s = Vec::new();
            while s.len() < 72 {
                s.extend_from_slice(pieces[rng.usize(0..pieces.len())]);
            }
            s.truncate(rng.usize(0..71));
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::summarize::error_words::{is_exception_line, starts_with_exception_name};
    use crate::compact::summarize::line_kind::split_line_number;

    /// [`split_line_number`] as it read before its first-byte test.
    /// [`split_line_number`] as it read before its first-byte test.
    fn split_line_number_reference(line: &str) -> (Option<&str>, &str) {
        let trimmed = line.trim_start();
        let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 7 {
            return (None, line);
        }
        let rest = &trimmed[digits..];
        match rest.as_bytes().first() {
            Some(b'\t' | b':' | b' ' | b'|' | b'-') => {
                (Some(&trimmed[..digits]), rest[1..].trim_start())
            }
            _ => (None, line),
        }
    }

    #[test]
    fn trimmed_numbered_and_spaced_lines_read_as_the_std_reads_them() {
        const SPACES: [&str; 11] = [
            " ", "\t", "\n", "\x0b", "\x0c", "\r", "\u{85}", "\u{a0}", "\u{2003}", "\u{3000}",
            "\u{1680}",
        ];
        let mut pieces: Vec<&[u8]> = SPACES.iter().map(|s| s.as_bytes()).collect();
        pieces.extend([
            b"x" as &[u8],
            b"Z",
            b"7",
            b"42",
            b":",
            b": ",
            b"|",
            b"-",
            b"ValueError",
            b"pkg.mod",
            b"_",
            b".",
            "é".as_bytes(),
            "\u{2028}".as_bytes(),
            b"\x00",
            b"~",
        ]);
        let mut lines: Vec<String> = random_lines(&pieces, 60_000, 0x2545_f491_4f6c_dd1d)
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect();
        // Each kind of whitespace at every place of every length (blocks of 16 and their
        // edges), in a line of letters and in a numbered one.
        for n in 0..=70 {
            for i in 0..n {
                for space in SPACES {
                    let mut l = "x".repeat(i);
                    l.push_str(space);
                    l.push_str(&"y".repeat(n - i - 1));
                    lines.push(format!("{i}{space}{l}"));
                    lines.push(l);
                }
            }
        }
        for l in &lines {
            assert_eq!(trim(l), l.trim(), "{l:?}");
            assert_eq!(trim_start(l), l.trim_start(), "{l:?}");
            assert_eq!(has_whitespace(l), l.contains(char::is_whitespace), "{l:?}");
            assert_eq!(
                split_line_number(l),
                split_line_number_reference(l),
                "{l:?}"
            );
            let b = l.as_bytes();
            assert_eq!(
                is_exception_line(b, memchr::memchr(b':', b)),
                starts_with_exception_name(b),
                "{l:?}"
            );
        }
    }
}
