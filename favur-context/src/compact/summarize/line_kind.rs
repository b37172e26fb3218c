//! What one line of tool output is, for the built-in summarizer: an error, a location, a
//! definition, a path, a search hit, a status, or plain text.
//!
//! Everything here reads one line at a time, in linear time, and never allocates unless
//! it returns a rewritten line.

use std::borrow::Cow;

use super::error_words::{Strength, keyword_strength};
use super::text::{ascii_kept, find_str, has_whitespace, last_word, trim, trim_start};

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
    /// A definition in a file view (`def f(x):`, `pub fn parse(..)`, `class A:`), or a
    /// line of a diff's outline (`diff --git`, `--- a/f`, `+++ b/f`, `@@ -1,3 +1,3 @@`).
    Definition,
    /// The first line of a definition's own documentation (its docstring, or the doc
    /// comment right above it): what the definition is for, in its author's words, and
    /// a line an edit of it often quotes.
    Doc,
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

/// Whether `code` (a line without its number, trimmed) opens a docstring or is a doc
/// comment with some words in it: a Python docstring (`"""Return the …`, `'''…`,
/// `r"""…`), a doc comment (`/// …`, `//! …`, `/** …`, `* …` inside one), or a `# …`
/// comment.
pub(crate) fn is_doc_line(code: &str) -> bool {
    const OPENS: [&str; 8] = ["r\"\"\"", "\"\"\"", "'''", "///", "//!", "/**", "# ", "* "];
    let rest = OPENS.iter().find_map(|open| code.strip_prefix(open));
    rest.is_some_and(|r| r.split_ascii_whitespace().nth(1).is_some())
}

/// Words that open a definition in common languages, by their first byte.
fn definition_words(first: u8) -> &'static [&'static str] {
    match first {
        b'd' => &["def ", "diff --git "],
        // A diff's outline: its files and hunks.
        b'-' => &["--- a/", "--- /dev/null"],
        b'+' => &["+++ b/"],
        b'@' => &["@@ "],
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
    if strength == Strength::Weak || is_test_outcome(t, colon) || is_test_total(t) {
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

/// A test run's total, passing or not: `=== 3 passed, 1 warning in 0.12s ===` (pytest),
/// `Ran 5 tests in 0.003s` and `OK (skipped=1)` (unittest), `test result: ok. 5 passed;
/// ...` (cargo), `Tests: 3 passed, 3 total` (jest), `tests finished: 5 passed, in 0.1
/// seconds` (sympy). A run that failed says so with a weak error word already; one that
/// passed says it only here.
fn is_test_total(t: &str) -> bool {
    // Most lines start with a byte no total starts with.
    let Some(&first) = t.as_bytes().first() else {
        return false;
    };
    if t.len() > 200
        || !matches!(
            first,
            b'=' | b'-' | b'0'..=b'9' | b'R' | b'O' | b't' | b'T' | b'n'
        )
    {
        return false;
    }
    let core = t.trim_matches(|c: char| c == '=' || c == '-' || c == ' ');
    core == "OK"
        || core.starts_with("OK (")
        || core.starts_with("no tests ran")
        || (core.starts_with("Ran ") && core.contains(" test"))
        || core.starts_with("test result: ")
        || (core.starts_with("Tests:") && core.ends_with(" total"))
        || counted(core, " passed")
}

/// Whether `word` follows a number in `t` (`12 passed`).
fn counted(t: &str, word: &str) -> bool {
    let b = t.as_bytes();
    let mut from = 0;
    while let Some(at) = find_str(&t[from..], word) {
        let at = from + at;
        if at > 0 && b[at - 1].is_ascii_digit() {
            return true;
        }
        from = at + word.len();
    }
    false
}

/// Whether `b` holds `::` (a search for its `:` bytes, no substring searcher to build).
fn has_double_colon(b: &[u8]) -> bool {
    memchr::memchr_iter(b':', b).any(|i| b.get(i + 1) == Some(&b':'))
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
    let long_listing = several && is_long_listing(t);
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

/// An `ls -l` row: a type and permission letters first (`drwxr-xr-x`), at least eight
/// words.
fn is_long_listing(t: &str) -> bool {
    matches!(t.as_bytes().first(), Some(b'-' | b'd' | b'l'))
        && t.as_bytes()
            .get(1..10)
            .is_some_and(|p| p.iter().all(|b| b"rwxsStT-@+.".contains(b)))
        && t.split_whitespace().count() >= 8
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

#[cfg(test)]
mod tests;
