//! The names of a text, found a block of 64 bytes at a time: paths, file names,
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
#[cfg(test)]
fn is_trigger(b: u8) -> bool {
    CLASS[usize::from(b)] & (DIGIT | UPPER | MARK) != 0
}

/// Bytes read at a time by [`block_masks`] and [`word_end`], as the bytes of a `u64`.
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
    Names {
        text,
        next: 0,
        base: 0,
        name: 0,
        pending: 0,
    }
}

/// Bytes of text per block of [`block_masks`], one bit per byte of a `u64`.
const BLOCK: usize = 64;

/// The high bit of each byte of `m` (the others clear) as the low eight bits, byte `k`
/// as bit `k`: the bit of byte `k` times `1 << 7 * (7 - k)` lands on bit `56 + k`, and
/// no two products of bits land on one place, so no carry.
fn gather(m: u64) -> u64 {
    m.wrapping_mul(0x0002_0408_1020_4081) >> 56
}

/// The [`name_byte`] bytes and the [`is_trigger`] bytes of the [`BLOCK`] bytes of
/// `bytes` from `base` (past the end: none), bit `k` for byte `base + k`.
fn block_masks(bytes: &[u8], base: usize) -> (u64, u64) {
    let rest = bytes.get(base..).unwrap_or_default();
    let mut padded = [0u8; BLOCK];
    let block = match rest.first_chunk::<BLOCK>() {
        Some(b) => b,
        None => {
            let n = rest.len().min(BLOCK);
            if let (Some(to), Some(from)) = (padded.get_mut(..n), rest.get(..n)) {
                to.copy_from_slice(from);
            }
            &padded
        }
    };
    let (words, _) = block.as_chunks::<WORD>();
    let (mut name, mut trigger) = (0u64, 0u64);
    // The words of a shorter text only (the others are padding).
    let used = rest.len().div_ceil(WORD);
    for (k, w) in words.iter().take(used).enumerate() {
        let w = u64::from_le_bytes(*w);
        let low7 = w & LOW7;
        let ascii = !w & HIGH;
        let marks = in_range(low7, b'-', b':') | in_range(low7, b'_', b'_');
        let triggers = (marks | in_range(low7, b'A', b'Z')) & ascii;
        let names = triggers | (in_range(low7, b'a', b'z') & ascii);
        name |= gather(names) << (k * WORD);
        trigger |= gather(triggers) << (k * WORD);
    }
    (name, trigger)
}

/// Whether `word` (at least one byte) is a word no name is made of, from its
/// [`is_trigger`] bytes (`triggers`, bit `k` for byte `k`): its triggers are at most an
/// uppercase first byte and one `.`, `/`, `-` or `:` last byte (`The`, `end.`, `Done:`),
/// so what is left once trimmed is an uppercase letter or none, then lowercase letters.
fn plain_word(word: &[u8], triggers: u64) -> bool {
    let mut rest = triggers;
    if word
        .last()
        .is_some_and(|b| matches!(b, b'.' | b'/' | b'-' | b':'))
    {
        rest &= !(1u64 << ((word.len() - 1) & 63));
    }
    if word.first().is_some_and(u8::is_ascii_uppercase) {
        rest &= !1;
    }
    rest == 0
}

/// The iterator of [`names`]: where the scan of `text` is, a block of [`BLOCK`] bytes
/// at a time.
#[derive(Debug, Clone)]
pub(crate) struct Names<'a> {
    text: &'a str,
    /// Where the next block starts (the end of the text: no more blocks).
    next: usize,
    /// Where the block read starts.
    base: usize,
    /// The [`name_byte`] bytes of the block read, bit `k` for byte `base + k`.
    name: u64,
    /// Its [`is_trigger`] bytes not yet read as part of a word.
    pending: u64,
}

impl<'a> Iterator for Names<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let text = self.text;
        let bytes = text.as_bytes();
        loop {
            // Only a word with a digit, an uppercase letter or a mark can be a name: the
            // next such byte, from the blocks' masks (a block without one costs no more).
            while self.pending == 0 {
                if self.next >= bytes.len() {
                    return None;
                }
                self.base = self.next;
                (self.name, self.pending) = block_masks(bytes, self.base);
                self.next = self.base + BLOCK;
            }
            let (base, name) = (self.base, self.name);
            let t = self.pending.trailing_zeros() as usize; // < 64: `pending` is not 0
            // The word's start: after the last byte before `t` that is no name byte, or
            // (none in the block) before the block, read byte by byte (the word started
            // in the block before has no trigger there, or it was read whole).
            let others = !name & ((1u64 << t) - 1);
            let start = if others != 0 {
                base + 64 - others.leading_zeros() as usize
            } else {
                let mut s = base;
                while s > 0 && bytes.get(s - 1).is_some_and(|&b| name_byte(b)) {
                    s -= 1;
                }
                s
            };
            // Its end: the first byte from `t` that is no name byte, or past the block.
            let run = (!(name >> t)).trailing_zeros() as usize; // >= 1: a trigger is a name byte
            let mut end = base + t + run;
            // The word's triggers, if it lies in the block.
            let mut inside = None;
            if t + run >= BLOCK {
                end = word_end(bytes, end);
                self.pending = 0;
                self.next = end;
            } else {
                if others != 0 {
                    inside = Some(self.pending & !(u64::MAX << (t + run)));
                }
                self.pending &= u64::MAX << (t + run);
            }
            let Some(word) = bytes.get(start..end) else {
                continue;
            };
            if word.len() < 3 {
                continue; // no name is shorter (`1`, `42`, `-`, `A`)
            }
            if let Some(triggers) = inside
                && plain_word(word, triggers >> (start - base))
            {
                continue;
            }
            if let Some(name) = name_of_word(text, start, end) {
                return Some(name);
            }
        }
    }
}

/// The name `text[start..end]` (a word of name bytes) holds, if any: the word itself if
/// it is letters and digits, else the word without the `.`, `/`, `-` and `:` at its
/// edges.
fn name_of_word(text: &str, start: usize, end: usize) -> Option<&str> {
    let bytes = text.as_bytes();
    let word = bytes.get(start..end)?;
    let flags = word.iter().fold(0u16, |f, &b| f | CLASS[usize::from(b)]);
    if flags & MARK == 0 {
        // Letters and digits only: nothing to trim, no path, URL or dotted name.
        return if is_plain_name(word, flags) {
            text.get(start..end)
        } else {
            None
        };
    }
    // Name bytes are ASCII, so these are character boundaries.
    let (mut from, mut to) = (start, end);
    let edge = |b: u8| matches!(b, b'.' | b'/' | b'-' | b':');
    while from < to && bytes.get(from).is_some_and(|&b| edge(b)) {
        from += 1;
    }
    while to > from && bytes.get(to - 1).is_some_and(|&b| edge(b)) {
        to -= 1;
    }
    if is_marked_name(bytes.get(from..to)?, flags) {
        text.get(from..to)
    } else {
        None
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
                    word_end(t, i),
                    i + t[i..].iter().take_while(|&&b| name_byte(b)).count(),
                    "{t:?} from {i}"
                );
            }
            // The masks of a block, from every start (past the end of the text too).
            for base in 0..=t.len() + 1 {
                let (mut name, mut trigger) = (0u64, 0u64);
                for (k, &b) in t.iter().skip(base).take(BLOCK).enumerate() {
                    name |= u64::from(name_byte(b)) << k;
                    trigger |= u64::from(is_trigger(b)) << k;
                }
                assert_eq!(block_masks(t, base), (name, trigger), "{t:?} from {base}");
            }
        }
    }

    #[test]
    fn plain_words_are_no_names() {
        // `plain_word` of a word as bytes, against its reading as a whole: a word it
        // calls plain is no name once trimmed.
        let alphabet = b"aqZQ9_./-:";
        let mut rng = fastrand::Rng::with_seed(0x9e37_79b9_7f4a_7c15);
        let mut seen_plain = 0;
        for _ in 0..50_000 {
            let n = rng.usize(1..=64);
            let w: Vec<u8> = (0..n)
                .map(|_| {
                    if rng.u8(..) < 200 {
                        rng.u8(b'a'..=b'z')
                    } else {
                        alphabet[rng.usize(0..alphabet.len())]
                    }
                })
                .collect();
            let triggers = w
                .iter()
                .enumerate()
                .fold(0u64, |m, (k, &b)| m | u64::from(is_trigger(b)) << k);
            let simple = {
                let mut rest: Vec<(usize, u8)> = (0..n)
                    .filter(|&k| is_trigger(w[k]))
                    .map(|k| (k, w[k]))
                    .collect();
                rest.retain(|&(k, b)| {
                    let trimmed = k == n - 1 && matches!(b, b'.' | b'/' | b'-' | b':');
                    let capital = k == 0 && b.is_ascii_uppercase();
                    !(trimmed || capital)
                });
                rest.is_empty()
            };
            assert_eq!(plain_word(&w, triggers), simple, "{w:?}");
            if simple {
                seen_plain += 1;
                let text = std::str::from_utf8(&w).unwrap();
                assert!(names_by_passes(text).is_empty(), "{text:?}");
            }
        }
        assert!(seen_plain > 1_000);
        assert!(plain_word(b"The", 1));
        assert!(plain_word(b"end.", 0b1000));
        assert!(plain_word(b"Done:", 0b10001));
        assert!(!plain_word(b"_ab", 1));
        assert!(!plain_word(b"9ab", 1));
        assert!(!plain_word(b"aB", 0b10));
    }

    #[test]
    fn names_across_blocks_are_what_the_passes_found() {
        // Texts longer than a block, words across block edges, multibyte characters.
        let words: [&[u8]; 12] = [
            b"the",
            b"The",
            b"end.",
            b"get_x",
            b"src/a.rs",
            b"QuerySet.filter",
            b"E015",
            b"a::b",
            b"https://x.org/a",
            b"na\xc3\xafve_n",
            b"--",
            b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaX",
        ];
        let seps: [&[u8]; 5] = [b" ", b", ", b"\n", b"(", b"\xe2\x80\x94"];
        let mut rng = fastrand::Rng::with_seed(0x2f7a_3c11_d4e5_9b01);
        for _ in 0..5_000 {
            let mut t = Vec::new();
            // A run of name bytes up to two blocks long at the start, in a third of them.
            if rng.u8(..) < 85 {
                let n = rng.usize(0..=2 * BLOCK + 2);
                t.extend((0..n).map(|_| b"aZ9_./-:q"[rng.usize(0..9)]));
            }
            for _ in 0..rng.usize(0..40) {
                t.extend_from_slice(words[rng.usize(0..words.len())]);
                t.extend_from_slice(seps[rng.usize(0..seps.len())]);
            }
            let text = String::from_utf8_lossy(&t);
            assert_eq!(
                names(&text).collect::<Vec<_>>(),
                names_by_passes(&text),
                "{text:?}"
            );
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
}
