//! What one line of tool output is, for the built-in summarizer: an error, a location, a
//! definition, a path, a search hit, a status, or plain text.
//!
//! Everything here reads one line at a time, in linear time, and never allocates unless
//! it returns a rewritten line.

use std::borrow::Cow;

/// What a line is, strongest first where it matters (see [`Line::rank`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineKind {
    /// Ordinary text: contributes identifiers only.
    Plain,
    /// Nothing to say (blank, or only markup such as `<output>`).
    Noise,
    /// An exit status (`exit status 101`, `<returncode>1</returncode>`): shown in the
    /// entry's header.
    Status,
    /// An error, exception, panic or traceback line.
    Error,
    /// A failure or assertion line, a test outcome (`tests/a.py::test_x FAILED`), a
    /// test-run total (`1 failed, 3 passed`).
    Outcome,
    /// A source location: a traceback frame (`File "a.py", line 3, in f`), `at a.rs:3:5`.
    Location,
    /// A definition in a file view (`def f(x):`, `pub fn parse(..)`, `class A:`).
    Definition,
    /// A search hit (`path:line:text` or `path:line-text`).
    Hit,
    /// A path or file name on a line of its own (a listing).
    Path,
}

/// Splits a leading line number off a numbered line (`nl`, `cat -n`, `grep -n` of one
/// file): `"   42\tdef f():"` -> `(Some("42"), "def f():")`; `"42:def f()"` -> the same.
pub(crate) fn split_line_number(line: &str) -> (Option<&str>, &str) {
    if line
        .as_bytes()
        .first()
        .is_none_or(|&b| ascii_kept(b) && !b.is_ascii_digit())
    {
        return (None, line); // a line starting with anything but a digit has no number
    }
    let trimmed = trim_start(line);
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 7 {
        return (None, line);
    }
    let rest = &trimmed[digits..];
    let sep = rest.as_bytes().first().copied();
    match sep {
        Some(b'\t') | Some(b':') | Some(b' ') | Some(b'|') | Some(b'-') => {
            (Some(&trimmed[..digits]), trim_start(&rest[1..]))
        }
        None => (None, line),
        _ => (None, line),
    }
}

/// Words that open a definition in common languages, by their first byte.
fn definition_words(first: u8) -> &'static [&'static str] {
    match first {
        b'd' => &["def "],
        b'a' => &["async def ", "async fn "],
        b'c' => &["class "],
        b'f' => &["fn ", "function ", "func "],
        b'p' => &[
            "pub fn ",
            "pub(crate) fn ",
            "pub async fn ",
            "pub struct ",
            "pub enum ",
            "pub trait ",
            "pub mod ",
            "public ",
            "private ",
            "protected ",
        ],
        b's' => &["struct ", "static "],
        b'e' => &[
            "enum ",
            "export function ",
            "export class ",
            "export default ",
        ],
        b't' => &["trait ", "type "],
        b'i' => &["impl ", "impl<", "interface "],
        b'm' => &["mod "],
        b'#' => &["#define "],
        _ => &[],
    }
}

/// [`slice::starts_with`] compared byte by byte up to the first difference (a short
/// word differs from most lines in its first bytes; no call to compare them).
fn starts_with_bytes(hay: &[u8], prefix: &[u8]) -> bool {
    hay.len() >= prefix.len() && hay.iter().zip(prefix).all(|(a, b)| a == b)
}

/// Whether `code` (a line without its number) starts a definition.
pub(crate) fn is_definition(code: &str) -> bool {
    let t = trim_start(code);
    // Most lines start with a byte no definition word starts with.
    let Some(&first) = t.as_bytes().first() else {
        return false;
    };
    definition_words(first)
        .iter()
        .any(|s| starts_with_bytes(t.as_bytes(), s.as_bytes()))
        && t.len() > 4
        && t.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Classifies one line.
pub(crate) fn classify(line: &str) -> LineKind {
    let t = trim(line);
    if t.is_empty() {
        return LineKind::Noise;
    }
    // Markup and a return code start with `<`: most lines do not.
    if t.as_bytes()[0] == b'<' {
        if is_markup_only(t) {
            return LineKind::Noise;
        }
        if returncode(t).is_some() {
            return LineKind::Status;
        }
    }
    // The first `:`, which exception lines, test ids and search hits are read from.
    let colon = memchr::memchr(b':', t.as_bytes());
    let strength = keyword_strength(t.as_bytes(), colon);
    if strength == Strength::Status {
        return LineKind::Status;
    }
    if strength == Strength::Strong {
        return LineKind::Error;
    }
    if t.starts_with("File \"") && t.contains(", line ") {
        return LineKind::Location;
    }
    if t.starts_with("at ") && t.contains(':') {
        return LineKind::Location;
    }
    if strength == Strength::Weak || is_test_outcome(t, colon) {
        return LineKind::Outcome;
    }
    if hit_at(t, colon).is_some() {
        return LineKind::Hit;
    }
    let (_, code) = split_line_number(line);
    if is_definition(code) {
        return LineKind::Definition;
    }
    if is_path_line(t) {
        return LineKind::Path;
    }
    LineKind::Plain
}

/// `<returncode>1</returncode>` (mini-swe-agent's observations) -> `1`.
pub(crate) fn returncode(t: &str) -> Option<&str> {
    if t.as_bytes().first() != Some(&b'<') {
        return None; // one byte read, not a comparison of the prefix
    }
    let rest = t.strip_prefix("<returncode>")?;
    let end = find_str(rest, "</returncode>")?;
    Some(rest[..end].trim())
}

/// A line that is only tags (`<output>`, `</output>`, `<output_head>`).
fn is_markup_only(t: &str) -> bool {
    t.starts_with('<')
        && t.ends_with('>')
        && !t[1..t.len() - 1].contains(['<', '>'])
        && t[1..t.len() - 1]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'/')
}

/// `tests/test_a.py::test_x FAILED`, `test parse::nested ... FAILED`, `PASSED`/`ok` lines
/// that name a test.
/// (`colon`: where the first `:` of `t` is, if any).
fn is_test_outcome(t: &str, colon: Option<usize>) -> bool {
    // Passing and skipped tests are names, not outcomes worth a line.
    let upper = ["FAILED", "ERROR", "XPASS"];
    let double_colon = colon.is_some_and(|c| has_double_colon(&t.as_bytes()[c..]));
    t.len() < 400 && (double_colon || t.starts_with("test ")) && upper.iter().any(|w| t.contains(w))
}

/// Whether `b` holds `::` (a search for its `:` bytes, no substring searcher to build).
fn has_double_colon(b: &[u8]) -> bool {
    memchr::memchr_iter(b':', b).any(|i| b.get(i + 1) == Some(&b':'))
}

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
fn is_ascii_space(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | b' ')
}

/// [`is_ascii_space`] as 0 or 1, without a branch (two range tests a vector compare
/// does many at a time).
fn ascii_space(b: u8) -> u8 {
    u8::from(b.wrapping_sub(b'\t') < 5) | u8::from(b == b' ')
}

/// Whether `s` holds a character that is whitespace ([`char::is_whitespace`]), read
/// 16 bytes at a time while `s` is ASCII.
fn has_whitespace(s: &str) -> bool {
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
fn ascii_kept(b: u8) -> bool {
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
fn last_word(t: &str) -> &str {
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

/// A search hit `path:line:text` / `path:line-text`: the path and the line number.
pub(crate) fn hit(t: &str) -> Option<(&str, &str)> {
    hit_at(t, memchr::memchr(b':', t.as_bytes()))
}

/// [`hit`] of `t`, whose first `:` is at `colon`.
fn hit_at(t: &str, colon: Option<usize>) -> Option<(&str, &str)> {
    let colon = colon?;
    let path = &t[..colon];
    if path.is_empty() || path.len() > 200 || has_whitespace(path) {
        return None;
    }
    if !(path.contains('/') || path.contains('.')) || !path.bytes().any(|b| b.is_ascii_alphabetic())
    {
        return None;
    }
    let rest = &t[colon + 1..];
    if rest.starts_with(':') {
        return None; // `a.py::test_x`, `a::b`: names, not hits
    }
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        // `grep -r` without `-n`: `path/to/file.ext:text`.
        let file = path.rsplit('/').next().unwrap_or(path);
        let has_ext = file.rsplit_once('.').is_some_and(|(n, e)| {
            !n.is_empty()
                && (1..=5).contains(&e.len())
                && e.bytes().all(|b| b.is_ascii_alphanumeric())
        });
        return (path.contains('/') && has_ext).then_some((path, ""));
    }
    match rest.as_bytes().get(digits) {
        Some(b':') | Some(b'-') => Some((path, &rest[..digits])),
        _ => None,
    }
}

/// A line holding one path or file name (a listing row, `ls -l` included).
fn is_path_line(t: &str) -> bool {
    // `ls -l` rows: permissions first, the name last. The words are counted only for a
    // line that starts like one (`t` is trimmed: it has more than one word if it has a
    // space at all).
    let several = has_whitespace(t);
    let long_listing = several
        && matches!(t.as_bytes().first(), Some(b'-' | b'd' | b'l'))
        && t.as_bytes()
            .get(1..10)
            .is_some_and(|p| p.iter().all(|b| b"rwxsStT-@+.".contains(b)))
        && t.split_whitespace().count() >= 8;
    if several && !long_listing {
        return false;
    }
    // A line without whitespace is its own last word.
    let last = if several { last_word(t) } else { t };
    last.len() <= 200
        && last.bytes().any(|b| b.is_ascii_alphabetic())
        && last.bytes().all(|b| PATH_BYTE[usize::from(b)])
        && (last.contains('/') || has_extension(last) || long_listing)
}

/// The bytes of a listed path: ASCII letters and digits, `/ . _ - + @ ~`.
const PATH_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric()
            || matches!(c, b'/' | b'.' | b'_' | b'-' | b'+' | b'@' | b'~');
        b += 1;
    }
    t
};

/// `setup.cfg`, `.gitignore`, `a.tar.gz`: a name ending in a short extension (a sentence
/// ending in a full stop is not).
fn has_extension(name: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(_, ext)| {
        (1..=6).contains(&ext.len())
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
            && ext.bytes().any(|b| b.is_ascii_alphabetic())
    })
}

/// The path of a listing line (its last word), with a `/` after a directory of an
/// `ls -l` row.
pub(crate) fn listed_path(t: &str) -> Cow<'_, str> {
    let t = t.trim();
    let name = last_word(t);
    if t.starts_with('d') && has_whitespace(t) && !name.ends_with('/') {
        Cow::Owned(format!("{name}/"))
    } else {
        Cow::Borrowed(name)
    }
}

/// Whether a location is in code the work is about rather than in a toolchain, an
/// installed package or the standard library (which frames name too).
pub(crate) fn is_project_location(t: &str) -> bool {
    const ELSEWHERE: [&str; 8] = [
        "/rustc/",
        "site-packages/",
        "/lib/python",
        "<frozen",
        "/.cargo/registry/",
        "/usr/lib/",
        "/usr/local/lib/",
        "node_modules/",
    ];
    !ELSEWHERE.iter().any(|e| t.contains(e))
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

/// `File "a/b.py", line 12, in run` -> `a/b.py:12 in run`.
pub(crate) fn frame(t: &str) -> Option<String> {
    let rest = t.trim().strip_prefix("File \"")?;
    let q = rest.find('"')?;
    let path = &rest[..q];
    let after = &rest[q + 1..];
    let line = after
        .strip_prefix(", line ")?
        .split(|c: char| !c.is_ascii_digit())
        .next()?;
    // The text after the first `, in ` up to the next one (`split(", in ").nth(1)`).
    let func = find_str(after, ", in ").map(|p| {
        let rest = &after[p + ", in ".len()..];
        find_str(rest, ", in ").map_or(rest, |q| &rest[..q]).trim()
    });
    // Written piece by piece (`format!` costs more than the copies).
    let func = func.filter(|f| !f.is_empty());
    let mut out =
        String::with_capacity(path.len() + line.len() + func.map_or(0, |f| f.len() + 4) + 1);
    out.push_str(path);
    out.push(':');
    out.push_str(line);
    if let Some(f) = func {
        out.push_str(" in ");
        out.push_str(f);
    }
    Some(out)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Strength {
    None,
    Weak,
    Strong,
    Status,
}

fn starts_ci(hay: &[u8], needle: &[u8]) -> bool {
    hay.len() >= needle.len()
        && hay
            .iter()
            .zip(needle)
            .all(|(&h, &n)| h.to_ascii_lowercase() == n)
}

/// Whether the byte before `line[i]` is a lowercase letter.
fn after_lowercase(line: &[u8], i: usize) -> bool {
    i > 0 && line[i - 1].is_ascii_lowercase()
}

/// The first two bytes of the keywords, in either case, as a set of byte pairs (bit
/// `first << 8 | second`): `exit`, `error`, `exception`; `fatal`, `fail`; `panic`;
/// `traceback`; `assert`.
const KEYWORD_PAIRS: [u64; 1024] = {
    let mut t = [0u64; 1024];
    let pairs = [b"ex", b"er", b"fa", b"pa", b"tr", b"as"];
    let mut k = 0;
    while k < pairs.len() {
        let (a, b) = (pairs[k][0], pairs[k][1]);
        // Each byte in both cases.
        let firsts = [a, a - 32];
        let seconds = [b, b - 32];
        let mut x = 0;
        while x < 2 {
            let mut y = 0;
            while y < 2 {
                let pair = (firsts[x] as usize) << 8 | seconds[y] as usize;
                t[pair >> 6] |= 1 << (pair & 63);
                y += 1;
            }
            x += 1;
        }
        k += 1;
    }
    t
};

/// Whether `line[i]` and `line[i + 1]` are the first two bytes of a keyword (one table
/// load, no branch: most positions are none).
fn keyword_pair(line: &[u8], i: usize) -> bool {
    let pair = usize::from(line[i]) << 8 | usize::from(line[i + 1]);
    KEYWORD_PAIRS[pair >> 6] >> (pair & 63) & 1 != 0
}

/// Whether a keyword can start at `line[i]` (`i + 1 < line.len()`): its first two bytes
/// are those of a keyword, at the start of a word (not after a letter, a digit, `/`, `.`
/// or `_`) or of a CamelCase part.
fn keyword_can_start(line: &[u8], i: usize) -> bool {
    if !keyword_pair(line, i) {
        return false;
    }
    let b = line[i];
    let prev = if i > 0 { line[i - 1] } else { b' ' };
    let camel = prev.is_ascii_lowercase() && b.is_ascii_uppercase();
    !(prev == b'/' || prev == b'.' || prev == b'_' || (prev.is_ascii_alphanumeric() && !camel))
}

/// The strongest error keyword of a line, where it reads as a message rather than as
/// code: `error: ...`, `ERROR ...`, `ValueError: bad`, `thread 'main' panicked at`,
/// `Traceback (most recent call last):`, `1 failed`. Code that only names errors
/// (`errors.append(e)`, `raise ValueError(x)`, `except (KeyError, OSError):`) and words
/// inside paths (`src/error.rs`) do not count.
/// (`colon`: where the first `:` of `line` is, if any).
fn keyword_strength(line: &[u8], colon: Option<usize>) -> Strength {
    if !may_start_keyword(line) {
        // What the scan finds in a line no keyword starts in.
        return if is_exception_line(line, colon) {
            Strength::Strong
        } else {
            Strength::None
        };
    }
    scan_keywords(line, colon)
}

/// [`keyword_strength`] read position by position, skipping the blocks of positions
/// where no keyword starts (see [`block_opens`]).
fn scan_keywords(line: &[u8], colon: Option<usize>) -> Strength {
    scan_keywords_with::<true>(line, colon)
}

/// [`scan_keywords`], skipping the blocks where no keyword starts if `SKIP` (its tests
/// read every position).
fn scan_keywords_with<const SKIP: bool>(line: &[u8], colon: Option<usize>) -> Strength {
    let mut best = Strength::None;
    let n = line.len();
    // A numbered line (`nl`, `cat -n`) starts after its number.
    let blank = line.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let number = line[blank..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let start = if number > 0
        && line
            .get(blank + number)
            .is_some_and(|b| b.is_ascii_whitespace() || *b == b':')
    {
        blank + number + 1
    } else {
        0
    };
    let mut i = start;
    while i + 4 <= n {
        // The next block of positions a keyword may start in (each window from the byte
        // before its first position; none before position 0).
        while SKIP
            && let Some(w) = i.checked_sub(1).and_then(|k| window(line, k))
            && !block_opens(w)
        {
            i += LANES;
        }
        // The next byte a keyword can start at.
        // Most positions are not the first two bytes of a keyword.
        while i + 4 <= n && !keyword_pair(line, i) {
            i += 1;
        }
        if i + 4 > n {
            break;
        }
        if !keyword_can_start(line, i) {
            i += 1;
            continue;
        }
        let c = line[i] | 0x20;
        let camel = after_lowercase(line, i) && line[i].is_ascii_uppercase();
        let rest = &line[i..];
        // What follows a keyword of `len` bytes: the end of a word, then optionally `:`.
        let ends_word = |len: usize| {
            rest.get(len).is_none_or(|b| {
                !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.' || *b == b'(')
            })
        };
        // Read only once a keyword matched: most candidate words are none.
        let at_start = || {
            line[start..i]
                .iter()
                .all(|b| b.is_ascii_whitespace() || b"[]!*=>#-E".contains(b))
                || line[..i].ends_with(b": ")
        };
        // `Name: message`: a colon, then a message on the same line (not the colon that
        // ends `except KeyError:`).
        let colon_message = |len: usize| {
            rest.get(len) == Some(&b':')
                && rest.get(len + 1) == Some(&b' ')
                && rest
                    .get(len + 2..)
                    .is_some_and(|m| m.iter().any(|b| !b.is_ascii_whitespace()))
        };
        let as_message = |len: usize| ends_word(len) && (at_start() || colon_message(len));
        let found = match c {
            b'e' if starts_ci(rest, b"exit code")
                || starts_ci(rest, b"exit status")
                || starts_ci(rest, b"exited with") =>
            {
                return Strength::Status;
            }
            b'e' if starts_ci(rest, b"error") && (as_message(5) || (camel && colon_message(5))) => {
                Strength::Strong
            }
            b'e' if starts_ci(rest, b"exception") && as_message(9) => Strength::Strong,
            b'f' if starts_ci(rest, b"fatal") && as_message(5) => Strength::Strong,
            b'f' if starts_ci(rest, b"fail")
                && (at_start() || ends_word(6) && starts_ci(rest, b"failed")) =>
            {
                Strength::Weak
            }
            b'p' if starts_ci(rest, b"panicked at")
                || (starts_ci(rest, b"panic") && as_message(5)) =>
            {
                Strength::Strong
            }
            b't' if starts_ci(rest, b"traceback (most recent call") => Strength::Strong,
            b'a' if starts_ci(rest, b"assertionerror")
                || (starts_ci(rest, b"assert") && at_start() && line[..i].contains(&b'E')) =>
            {
                Strength::Weak
            }
            _ => Strength::None,
        };
        best = best.max(found);
        i += 1;
    }
    if best < Strength::Strong && is_exception_line(line, colon) {
        return Strength::Strong;
    }
    best
}

/// Whether a keyword may start somewhere in `line` at a position with four bytes left:
/// the first three letters of one (`exi`, `exc`, `err`, `fat`, `fai`, `pan`, `tra`,
/// `ass`, any case) at the start of a word as [`keyword_can_start`] reads it (a
/// superset of the positions [`keyword_strength`] reads). The positions are tested
/// [`LANES`] at a time without a branch or an index (see [`block_opens`]), so the
/// compiler tests a block with vector instructions; most lines have none and are not
/// read byte by byte.
fn may_start_keyword(line: &[u8]) -> bool {
    let n = line.len();
    if n < 4 {
        return false;
    }
    // The bytes a position up to `n - 4` reads: the last one is not read.
    let read = &line[..n - 1];
    // The first block: position 0 reads as if after a space.
    let mut first = [0u8; LANES + 3];
    first[0] = b' ';
    let head = read.len().min(LANES + 2);
    first[1..=head].copy_from_slice(&read[..head]);
    if block_opens(&first) {
        return true;
    }
    // Then positions `k..k + LANES`, each window from the byte before `k`.
    let mut k = LANES;
    while k + 2 < read.len() {
        let opens = match window(read, k - 1) {
            Some(w) => block_opens(w),
            None => {
                // The last block, padded with zeros (which start no keyword).
                let mut last = [0u8; LANES + 3];
                let rest = &read[k - 1..];
                last[..rest.len()].copy_from_slice(rest);
                block_opens(&last)
            }
        };
        if opens {
            return true;
        }
        k += LANES;
    }
    false
}

/// Positions [`may_start_keyword`] tests at a time.
const LANES: usize = 16;

/// The [`LANES`] + 3 bytes of `b` from `at` (the window [`block_opens`] reads), if `b`
/// holds them.
fn window(b: &[u8], at: usize) -> Option<&[u8; LANES + 3]> {
    b.get(at..at.checked_add(LANES + 3)?)?.try_into().ok()
}

/// Whether a keyword may start at one of the positions `1..=LANES` of `w` (each read
/// with the byte before it and the two after it), as [`may_start_keyword`] reads one:
/// its letters first, then, if any position has them, where words start.
fn block_opens(w: &[u8; LANES + 3]) -> bool {
    let mut letters = [0u8; LANES];
    let mut any = 0;
    for j in 0..LANES {
        letters[j] = keyword_letters(w[j + 1], w[j + 2], w[j + 3]);
        any |= letters[j];
    }
    if any == 0 {
        return false;
    }
    let mut starts = 0;
    for j in 0..LANES {
        starts |= letters[j] & word_start(w[j], w[j + 1]);
    }
    starts != 0
}

/// Whether `a`, `b`, `c` are the first three letters of a keyword (`exi`, `exc`, `err`,
/// `fat`, `fai`, `pan`, `tra`, `ass`), any case, as 0 or 1 (no branch).
#[inline(always)]
fn keyword_letters(a: u8, b: u8, c: u8) -> u8 {
    let (x, y, z) = (a | 0x20, b | 0x20, c | 0x20);
    let e = u8::from(x == b'e')
        & ((u8::from(y == b'x') & (u8::from(z == b'i') | u8::from(z == b'c')))
            | (u8::from(y == b'r') & u8::from(z == b'r')));
    let f = u8::from(x == b'f') & u8::from(y == b'a') & (u8::from(z == b't') | u8::from(z == b'i'));
    let p = u8::from(x == b'p') & u8::from(y == b'a') & u8::from(z == b'n');
    let t = u8::from(x == b't') & u8::from(y == b'r') & u8::from(z == b'a');
    let s = u8::from(x == b'a') & u8::from(y == b's') & u8::from(z == b's');
    e | f | p | t | s
}

/// Whether a word starts at `a` after `prev`, as [`keyword_can_start`] reads it (`prev`
/// is no letter, digit, `/`, `.` or `_`, or `a` starts a CamelCase part), as 0 or 1
/// (no branch).
#[inline(always)]
fn word_start(prev: u8, a: u8) -> u8 {
    let lower = u8::from(prev.wrapping_sub(b'a') < 26);
    let letter = u8::from((prev | 0x20).wrapping_sub(b'a') < 26);
    let digit = u8::from(prev.wrapping_sub(b'0') < 10);
    let camel = lower & u8::from(a.wrapping_sub(b'A') < 26);
    // `.` and `/` are 0x2e and 0x2f.
    let mark = u8::from(prev & 0xfe == b'.') | u8::from(prev == b'_');
    let joined = mark | ((letter | digit) & (camel ^ 1));
    joined ^ 1
}

/// The last line of a traceback: `pkg.mod.SomeError: message` (a dotted or CamelCase
/// name ending in `:` at the start of the line, then a message).
/// (`colon`: where the first `:` of `line` is, if any).
fn is_exception_line(line: &[u8], colon: Option<usize>) -> bool {
    // The name ends at the line's first `:`, then a space: most lines have none there.
    if colon.is_none_or(|c| line.get(c + 1) != Some(&b' ')) {
        return false;
    }
    starts_with_exception_name(line)
}

/// Whether `line` starts (after its indent) with an exception's name, then `: `: letters,
/// digits, `.` and `_`, at least five, CamelCase, starting and ending with a letter.
fn starts_with_exception_name(line: &[u8]) -> bool {
    let t = line.trim_ascii_start();
    // The name: letters, digits, `.` and `_` up to the line's first `:`.
    let colon = t
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'.' || **b == b'_')
        .count();
    let name = &t[..colon];
    name.len() >= 5
        && t.get(colon) == Some(&b':')
        && t.get(colon + 1) == Some(&b' ')
        && name[0].is_ascii_alphabetic()
        && name
            .windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
        && name.last().is_some_and(u8::is_ascii_alphabetic)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_no_keyword_starts_in_read_as_the_scan_reads_them() {
        let fixed = [
            "error: x",
            "ValueError: bad",
            "  File \"a.py\", line 3",
            "x.error y",
            "getError()",
            "thread 'main' panicked at src/a.rs:1:2",
            "Traceback (most recent call last):",
            "exit status 1",
            "1 failed, 2 passed",
            "assert x == 1",
            "E   AssertionError",
            "fatal: not a git repository",
            "FAIL tests/a.rs",
            "KeyError: 'a'",
        ];
        // Lines made of keywords, their look-alikes and what may stand before them.
        let words: [&[u8]; 34] = [
            b"error",
            b"Error",
            b"ERROR",
            b"err",
            b"exception",
            b"Exception",
            b"fatal",
            b"fail",
            b"failed",
            b"FAILED",
            b"panic",
            b"panicked at",
            b"Traceback (most recent call",
            b"assert",
            b"AssertionError",
            b"exit code",
            b"exit status",
            b"exited with",
            b"E",
            b":",
            b": ",
            b" ",
            b"  ",
            b"/",
            b".",
            b"_",
            b"x",
            b"foo",
            b"Value",
            b"get",
            b"(",
            b"1",
            b"12\t",
            b"tests/a.py::t",
        ];
        let mut rng = fastrand::Rng::with_seed(0x2f6b_51c3_91aa_0e17);
        let mut generated = Vec::new();
        for _ in 0..50_000 {
            let mut s = Vec::new();
            for _ in 0..rng.usize(1..=6) {
                s.extend_from_slice(words[rng.usize(0..words.len())]);
            }
            generated.push(s);
        }
        for line in fixed
            .iter()
            .map(|l| l.as_bytes())
            .chain(generated.iter().map(Vec::as_slice))
        {
            let colon = memchr::memchr(b':', line);
            let by_positions = scan_keywords_with::<false>(line, colon);
            assert_eq!(
                scan_keywords(line, colon),
                by_positions,
                "{:?}",
                String::from_utf8_lossy(line)
            );
            assert_eq!(
                keyword_strength(line, colon),
                by_positions,
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
    }

    /// Random lines from `pieces`, cut to every length up to 70 bytes at times (blocks of
    /// [`LANES`] and their edges), from a fixed seed.
    fn random_lines(pieces: &[&[u8]], count: usize, seed: u64) -> Vec<Vec<u8>> {
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

    /// [`may_start_keyword`] read position by position (no blocks).
    fn may_start_keyword_bytewise(line: &[u8]) -> bool {
        const STARTS: [&[u8]; 8] = [
            b"exi", b"exc", b"err", b"fat", b"fai", b"pan", b"tra", b"ass",
        ];
        line.len() >= 4
            && (0..=line.len() - 4).any(|i| {
                let prev = if i == 0 { b' ' } else { line[i - 1] };
                let camel = prev.is_ascii_lowercase() && line[i].is_ascii_uppercase();
                let joined = b"/._".contains(&prev) || (prev.is_ascii_alphanumeric() && !camel);
                STARTS.contains(&&*line[i..i + 3].to_ascii_lowercase()) && !joined
            })
    }

    #[test]
    fn keyword_starts_are_found_in_blocks_as_position_by_position() {
        let pieces: [&[u8]; 30] = [
            b"err",
            b"ERR",
            b"Exc",
            b"exi",
            b"fat",
            b"fAi",
            b"pan",
            b"tra",
            b"ass",
            b"e",
            b"x",
            b"r",
            b"a",
            b"s",
            b" ",
            b"\t",
            b"\x0b",
            b"\x0c",
            b"\r",
            b"/",
            b".",
            b"_",
            b"-",
            b"0",
            b"Z",
            b"q",
            "é".as_bytes(),
            "\u{2003}".as_bytes(),
            b"\xff",
            b"\x00",
        ];
        let mut lines = random_lines(&pieces, 60_000, 0x9e37_79b9_7f4a_7c15);
        // One keyword start at every position of every length, and its look-alikes.
        for n in 0..=70 {
            for i in 0..n {
                for (before, word) in [
                    (b' ', b"err"),
                    (b'x', b"err"),
                    (b'a', b"Err"),
                    (b'/', b"tra"),
                ] {
                    let mut s = vec![b'q'; n];
                    if i > 0 {
                        s[i - 1] = before;
                    }
                    let end = (i + 3).min(n);
                    s[i..end].copy_from_slice(&word[..end - i]);
                    lines.push(s);
                }
            }
        }
        for line in &lines {
            assert_eq!(
                may_start_keyword(line),
                may_start_keyword_bytewise(line),
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
    }

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

    #[test]
    fn substrings_are_found_where_str_find_finds_them() {
        let pieces: [&[u8]; 14] = [
            b"<",
            b"<<",
            b"</returncode>",
            b"</return",
            b", in ",
            b", i",
            b",",
            b" ",
            b"x",
            b"/rustc/",
            b"/usr/lib/",
            "é".as_bytes(),
            b"n",
            b"\"",
        ];
        let needles = [
            "</returncode>",
            ", in ",
            "<<",
            "/rustc/",
            "/usr/lib/",
            "x",
            "",
        ];
        for line in random_lines(&pieces, 20_000, 0x0123_4567_89ab_cdef) {
            let hay = String::from_utf8_lossy(&line);
            for needle in needles {
                assert_eq!(
                    find_str(&hay, needle),
                    hay.find(needle),
                    "{hay:?} {needle:?}"
                );
            }
            // A frame's function: the text after the first `, in ` up to the next one.
            let framed = format!("File \"a.py\", line 3{hay}");
            let func = framed.trim().split(", in ").nth(1).map(str::trim);
            let expected = match func {
                Some(f) if !f.is_empty() => format!("a.py:3 in {f}"),
                _ => "a.py:3".to_string(),
            };
            assert_eq!(
                frame(&framed).as_deref(),
                Some(expected.as_str()),
                "{framed:?}"
            );
        }
    }

    /// [`is_definition`] as it read with `str::starts_with`.
    fn is_definition_reference(code: &str) -> bool {
        let t = code.trim_start();
        let Some(&first) = t.as_bytes().first() else {
            return false;
        };
        definition_words(first).iter().any(|s| t.starts_with(s))
            && t.len() > 4
            && t.bytes().any(|b| b.is_ascii_alphabetic())
    }

    /// [`is_path_line`] as it read with `str::starts_with` and a search of the path bytes.
    fn is_path_line_reference(t: &str) -> bool {
        let several = t.contains(char::is_whitespace);
        let long_listing = several
            && t.starts_with(['-', 'd', 'l'])
            && t.as_bytes()
                .get(1..10)
                .is_some_and(|p| p.iter().all(|b| b"rwxsStT-@+.".contains(b)))
            && t.split_whitespace().count() >= 8;
        if several && !long_listing {
            return false;
        }
        let last = t.rsplit(char::is_whitespace).next().unwrap_or(t);
        last.len() <= 200
            && last.bytes().any(|b| b.is_ascii_alphabetic())
            && last
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/._-+@~".contains(&b))
            && (last.contains('/') || has_extension(last) || long_listing)
    }

    #[test]
    fn definitions_and_paths_read_as_before() {
        let pieces: [&[u8]; 26] = [
            b"def ",
            b"de",
            b"pub fn ",
            b"pub(crate) fn ",
            b"pub",
            b"p",
            b"impl<",
            b"impl ",
            b"i",
            b"#define ",
            b"#",
            b"class ",
            b"x",
            b" ",
            b"\t",
            b"src/",
            b"a.py",
            b".",
            b"-rw-r--r-- ",
            b"drwxr-xr-x ",
            b"1 ",
            b"~",
            b"+",
            b"@",
            "é".as_bytes(),
            "\u{2003}".as_bytes(),
        ];
        let mut lines = random_lines(&pieces, 60_000, 0x3c6e_f372_fe94_f82b);
        // `ls -l` rows of every kind, and look-alikes.
        for perms in [
            "-rw-r--r--",
            "drwxr-xr-x",
            "lrwxrwxrwx",
            "xrwxrwxrwx",
            "-rw-r--r",
        ] {
            for name in ["setup.cfg", "src", "a b", "naïve.py"] {
                lines.push(format!("{perms} 1 root root 4096 Jan  1 12:00 {name}").into_bytes());
                lines.push(format!("{perms} 1 root 4096 {name}").into_bytes());
            }
        }
        for line in lines {
            let l = String::from_utf8_lossy(&line);
            assert_eq!(is_definition(&l), is_definition_reference(&l), "{l:?}");
            let t = l.trim();
            assert_eq!(is_path_line(t), is_path_line_reference(t), "{t:?}");
        }
    }

    #[test]
    fn kinds_of_lines() {
        for (line, kind) in [
            ("Traceback (most recent call last):", LineKind::Error),
            ("ValueError: bad input", LineKind::Error),
            ("  File \"a/b.py\", line 3, in f", LineKind::Location),
            ("tests/test_a.py::test_x FAILED", LineKind::Outcome),
            ("==== 1 failed, 2 passed in 0.1s ====", LineKind::Outcome),
            ("src/lib.rs:42:    fn parse()", LineKind::Hit),
            ("src/lib.rs:42-    context", LineKind::Hit),
            ("   120\t    def parse(self, x):", LineKind::Definition),
            ("pub fn parse(input: &str) -> Ast {", LineKind::Definition),
            ("django/db/models/query.py", LineKind::Path),
            ("setup.cfg", LineKind::Path),
            ("names.", LineKind::Plain),
            (
                "-rw-r--r--  1 root root  4096 Jan  1 12:00 setup.cfg",
                LineKind::Path,
            ),
            ("<returncode>1</returncode>", LineKind::Status),
            ("exit status 101", LineKind::Status),
            ("<output>", LineKind::Noise),
            ("   ", LineKind::Noise),
            ("just some words here", LineKind::Plain),
            ("see src/error.rs for details", LineKind::Plain),
            // Code that names errors is not an error.
            ("        errors.append(", LineKind::Plain),
            (
                "    except (FieldDoesNotExist, AttributeError):",
                LineKind::Plain,
            ),
            ("    raise ValueError('bad')", LineKind::Plain),
            ("   608                 except KeyError:", LineKind::Plain),
            ("  1281             except Exception:", LineKind::Plain),
            ("ValueError: ", LineKind::Plain),
            ("  12\tValueError: bad value", LineKind::Error),
            (
                "error[E0277]: `&str` has no retention class",
                LineKind::Error,
            ),
            ("E       AssertionError: assert 1 == 2", LineKind::Error),
            (
                "django.core.exceptions.ImproperlyConfigured: Requested setting",
                LineKind::Error,
            ),
            (
                "thread 'main' panicked at src/parse.rs:3:5:",
                LineKind::Error,
            ),
        ] {
            assert_eq!(classify(line), kind, "{line}");
        }
    }

    #[test]
    fn parts_of_lines() {
        assert_eq!(
            split_line_number("   42\tdef f():"),
            (Some("42"), "def f():")
        );
        assert_eq!(split_line_number("no number"), (None, "no number"));
        assert_eq!(hit("a/b.py:12:x = 1"), Some(("a/b.py", "12")));
        assert_eq!(hit("http://x:80/"), None);
        assert_eq!(
            hit("django/db/models/base.py:    id='models.E015',"),
            Some(("django/db/models/base.py", ""))
        );
        assert_eq!(hit("note: see the docs"), None);
        assert_eq!(hit("tests/a.py::test_x PASSED"), None);
        assert_eq!(
            frame("  File \"a/b.py\", line 12, in run").as_deref(),
            Some("a/b.py:12 in run")
        );
        assert_eq!(returncode("<returncode>2</returncode>"), Some("2"));
        assert!(is_project_location("src/parse.rs:3:5"));
        assert!(!is_project_location(
            "at /rustc/library/core/src/ops/function.rs:250:5"
        ));
        assert_eq!(listed_path("-rw-r--r-- 1 a a 1 Jan 1 12:00 x.py"), "x.py");
        assert_eq!(listed_path("drwxr-xr-x 2 a a 1 Jan 1 12:00 src"), "src/");
    }
}
