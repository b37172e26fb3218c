//! What a reader sees of a text: each character folded as a model reads it before any
//! engine mark is matched. A character folds to its compatibility form (NFKC), in lower
//! case, mapped to its UTS 39 confusable prototype (the skeleton: `＜` and `‹` read as
//! `<`, Cyrillic `і` as `i`), with default-ignorable characters (zero-width spaces and
//! joiners, bidi controls, variation selectors, tags) folding to nothing. `|` stays
//! itself (its prototype is `l`), so that `<|` is told from `<l`.
//!
//! Folding is done only where a mark can start: at a character whose fold opens with
//! `<` or `[` ([`opens_mark`]) and at line starts, so plain text is scanned once, byte
//! by byte for ASCII.

use std::sync::OnceLock;

use unicode_normalization::UnicodeNormalization;

/// Every character a reader takes as a line break: LF, CR, VT, FF, NEL, LINE SEPARATOR
/// and PARAGRAPH SEPARATOR.
pub const LINE_BREAKS: [char; 7] = [
    '\n', '\r', '\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}',
];

/// The characters beyond ASCII whose fold opens with `<` or `[` (fullwidth forms,
/// angle quotes, brackets of other scripts, ...), sorted: generated from the fold of
/// every character and checked by a test that folds every character again.
pub(super) const OPENERS: [char; 21] = [
    '\u{2c2}',
    '\u{1438}',
    '\u{1445}',
    '\u{16b2}',
    '\u{2039}',
    '\u{226a}',
    '\u{226e}',
    '\u{22d6}',
    '\u{22d8}',
    '\u{276e}',
    '\u{298b}',
    '\u{2cb4}',
    '\u{2cb5}',
    '\u{2d66}',
    '\u{fe47}',
    '\u{fe64}',
    '\u{ff1c}',
    '\u{ff3b}',
    '\u{1032d}',
    '\u{16aec}',
    '\u{1d236}',
];

/// Pushes what a reader sees of `c` (see the module): nothing for an ignorable one.
fn fold_into(c: char, out: &mut Vec<char>) {
    for k in std::iter::once(c).nfkc() {
        for l in k.to_lowercase() {
            if l == '|' {
                out.push('|');
                continue;
            }
            let mut buf = [0u8; 4];
            for m in unicode_security::skeleton(l.encode_utf8(&mut buf)) {
                out.extend(m.to_lowercase());
            }
        }
    }
}

/// The folds of the ASCII characters, computed once.
pub(super) fn ascii_fold(b: u8) -> &'static [char] {
    ascii_folds().get(usize::from(b)).map_or(&[], Vec::as_slice)
}

/// The folds of the ASCII characters, computed once.
fn ascii_folds() -> &'static [Vec<char>] {
    static FOLDS: OnceLock<Vec<Vec<char>>> = OnceLock::new();
    FOLDS.get_or_init(|| {
        (0u8..128)
            .map(|b| {
                let mut out = Vec::new();
                fold_into(char::from(b), &mut out);
                out
            })
            .collect()
    })
}

/// What a reader sees of `word` (a mark's name), folded as text is.
pub(super) fn fold_word(word: &str) -> Vec<char> {
    let mut out = Vec::with_capacity(word.len());
    for c in word.chars() {
        fold_into(c, &mut out);
    }
    out
}

/// Whether a reader sees `<` or `[` first in `c`: where a mark can start. The ASCII
/// ones are `<` and `[` alone (a test checks it).
pub(super) fn opens_mark(c: char) -> bool {
    if c.is_ascii() {
        return c == '<' || c == '[';
    }
    OPENERS.binary_search(&c).is_ok()
}

/// The folded characters of a text from some byte on, produced as they are asked for:
/// each with the byte where its source character ends.
pub(super) struct Window<'t> {
    text: &'t str,
    /// The byte of the next source character to fold.
    next: usize,
    /// The byte where the folding stops (the end of the text or of a line).
    limit: usize,
    got: Vec<(char, usize)>,
    /// The folds of the ASCII characters.
    ascii: &'static [Vec<char>],
    /// The fold of a character beyond ASCII (kept to be reused).
    scratch: Vec<char>,
}

impl<'t> Window<'t> {
    /// The folded characters of `text` (from its start; see [`restart`](Window::restart)).
    pub(super) fn new(text: &'t str) -> Self {
        Window {
            text,
            next: 0,
            limit: text.len(),
            got: Vec::new(),
            ascii: ascii_folds(),
            scratch: Vec::new(),
        }
    }

    /// Starts again at byte `from` of the text (a character boundary).
    pub(super) fn restart(&mut self, from: usize) {
        self.restart_within(from, self.text.len());
    }

    /// Starts again at byte `from`, folding nothing from byte `limit` on (both character
    /// boundaries).
    pub(super) fn restart_within(&mut self, from: usize, limit: usize) {
        self.next = from;
        self.limit = limit;
        self.got.clear();
    }

    /// The `k`th folded character from the start, if the text has one.
    #[inline]
    pub(super) fn at(&mut self, k: usize) -> Option<char> {
        match self.got.get(k) {
            Some(&(c, _)) => Some(c),
            None => self.fill(k).map(|(c, _)| c),
        }
    }

    /// The byte where the source of the `k`th folded character ends.
    pub(super) fn end(&mut self, k: usize) -> Option<usize> {
        self.fill(k).map(|(_, e)| e)
    }

    /// The index of the first folded character at or after `k` that is not white space.
    pub(super) fn skip_space(&mut self, mut k: usize) -> usize {
        while self.at(k).is_some_and(char::is_whitespace) {
            k += 1;
        }
        k
    }

    /// Whether the folded characters from `k` on are `word` (folded).
    #[inline]
    pub(super) fn starts(&mut self, k: usize, word: &[char]) -> bool {
        word.iter()
            .enumerate()
            .all(|(i, &c)| self.at(k + i) == Some(c))
    }

    #[inline(never)]
    fn fill(&mut self, k: usize) -> Option<(char, usize)> {
        while self.got.len() <= k {
            if self.next >= self.limit {
                return None;
            }
            let b = *self.text.as_bytes().get(self.next)?;
            if b.is_ascii() {
                self.next += 1;
                let end = self.next;
                match self.ascii.get(usize::from(b)).map(Vec::as_slice) {
                    Some([one]) => self.got.push((*one, end)),
                    Some(fold) => self.got.extend(fold.iter().map(|&f| (f, end))),
                    None => {}
                }
                continue;
            }
            let c = self.text.get(self.next..self.limit)?.chars().next()?;
            self.next += c.len_utf8();
            let end = self.next;
            {
                self.scratch.clear();
                fold_into(c, &mut self.scratch);
                self.got.extend(self.scratch.iter().map(|&f| (f, end)));
            }
        }
        self.got.get(k).copied()
    }
}

/// Whether `c` can be part of a tag or role name: a tag name ends where one of these
/// does not follow.
pub(super) fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '-' || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(text: &str) -> String {
        let mut w = Window::new(text);
        (0..).map_while(|k| w.at(k)).collect()
    }

    #[test]
    fn openers_are_every_character_whose_fold_opens_a_mark() {
        let mut found = Vec::new();
        let mut out = Vec::new();
        for c in (0..=0x10ffffu32).filter_map(char::from_u32) {
            out.clear();
            fold_into(c, &mut out);
            if matches!(out.first(), Some('<' | '[')) {
                found.push(c);
            }
        }
        let ascii: Vec<char> = found.iter().copied().filter(char::is_ascii).collect();
        assert_eq!(ascii, ['<', '[']);
        let beyond: Vec<String> = found
            .iter()
            .filter(|c| !c.is_ascii())
            .map(|c| format!("'\\u{{{:x}}}'", u32::from(*c)))
            .collect();
        let table: Vec<String> = OPENERS
            .iter()
            .map(|c| format!("'\\u{{{:x}}}'", u32::from(*c)))
            .collect();
        assert_eq!(table, beyond, "regenerate OPENERS from this list");
        assert!(OPENERS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_reader_sees_through_forms_look_alikes_and_invisibles() {
        assert_eq!(fold("\u{ff1c}Directive\u{ff1e}"), fold("<directive>"));
        assert_eq!(fold("\u{2039}d\u{456}rective"), fold("<directive"));
        assert_eq!(fold("<\u{200b}dir\u{feff}ective"), fold("<directive"));
        assert_eq!(fold("<\u{ff5c}"), "<|");
        assert_ne!(fold("<|"), fold("<l"));
        // The marks' own characters read as themselves (the matchers compare them).
        assert_eq!(fold("</>[]|"), "</>[]|");
    }
}
