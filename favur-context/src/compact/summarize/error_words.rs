//! Whether a line reads as an error message: the keywords (`error:`, `panicked at`,
//! `Traceback`, `1 failed`, `exit status`) where they start a message rather than name
//! something in code, and exception lines (`pkg.SomeError: message`), scanned 16
//! positions at a time.

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Strength {
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
pub(crate) fn keyword_strength(line: &[u8], colon: Option<usize>) -> Strength {
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
    let start = code_start(line);
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
        let found = keyword_at(line, start, i);
        if found == Strength::Status {
            return Strength::Status;
        }
        best = best.max(found);
        i += 1;
    }
    if best < Strength::Strong && is_exception_line(line, colon) {
        return Strength::Strong;
    }
    best
}

/// Where the text of a line starts: after its number (`nl`, `cat -n`), if it has one.
fn code_start(line: &[u8]) -> usize {
    let blank = line.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let number = line[blank..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if number > 0
        && line
            .get(blank + number)
            .is_some_and(|b| b.is_ascii_whitespace() || *b == b':')
    {
        blank + number + 1
    } else {
        0
    }
}

/// The keyword that starts at `line[i]` (a position [`keyword_can_start`] accepts; the
/// text starts at `start`), as it reads there: a status, an error, a failure, or none.
fn keyword_at(line: &[u8], start: usize, i: usize) -> Strength {
    let c = line[i] | 0x20;
    let camel = after_lowercase(line, i) && line[i].is_ascii_uppercase();
    let rest = &line[i..];
    // What follows a keyword of `len` bytes: the end of a word, then optionally `:`.
    let ends_word = |len: usize| {
        rest.get(len)
            .is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.' || *b == b'('))
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
    match c {
        b'e' if starts_ci(rest, b"exit code")
            || starts_ci(rest, b"exit status")
            || starts_ci(rest, b"exited with") =>
        {
            Strength::Status
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
        b'p' if starts_ci(rest, b"panicked at") || (starts_ci(rest, b"panic") && as_message(5)) => {
            Strength::Strong
        }
        b't' if starts_ci(rest, b"traceback (most recent call") => Strength::Strong,
        b'a' if starts_ci(rest, b"assertionerror")
            || (starts_ci(rest, b"assert") && at_start() && line[..i].contains(&b'E')) =>
        {
            Strength::Weak
        }
        _ => Strength::None,
    }
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
pub(crate) fn is_exception_line(line: &[u8], colon: Option<usize>) -> bool {
    // The name ends at the line's first `:`, then a space: most lines have none there.
    if colon.is_none_or(|c| line.get(c + 1) != Some(&b' ')) {
        return false;
    }
    starts_with_exception_name(line)
}

/// Whether `line` starts (after its indent) with an exception's name, then `: `: letters,
/// digits, `.` and `_`, at least five, CamelCase, starting and ending with a letter.
pub(crate) fn starts_with_exception_name(line: &[u8]) -> bool {
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

    use crate::compact::summarize::text::random_lines;
    /// Lines made of keywords, their look-alikes and what may stand before them.
    const KEYWORD_PIECES: [&[u8]; 34] = [
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
        let words = KEYWORD_PIECES;
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
}
