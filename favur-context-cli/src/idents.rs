//! Code-like identifiers: what "reference survival" counts.
//!
//! Text is cut into *words*: maximal runs of ASCII letters, digits and `_ . / -`. Each word
//! is trimmed of leading and trailing `. / -` characters (so `./src/a.rs`, `/src/a.rs` and
//! `src/a.rs.` all become `src/a.rs`). A trimmed word of at least 2 characters is an
//! *identifier* when it is
//!
//! - a **path**: it contains `/` and a letter (`django/db/models/base.py`);
//! - a **snake or dunder symbol**: it contains `_` and a letter (`get_ordering`, `__init__`);
//! - a **dotted name**: at least 4 characters, a `.` between two letters or digits, and a
//!   letter (`models.E015`, `widgets.py`, `self.media`);
//! - a **camel-case symbol**: a lowercase letter directly followed by an uppercase one
//!   (`MediaOrderConflictWarning`, `getAttr`);
//! - a **mixed word**: at least 3 characters with both a letter and a digit (`E015`, `utf8`);
//! - a **number**: all digits, at least 2 of them (line numbers, counts, ids).
//!
//! Everything else (plain English words, punctuation, single digits) is not an identifier.
//!
//! An identifier *appears* in a text if it is one of the text's identifier words or a run
//! of whole `.`/`/`-separated parts of one ([`presence_keys`]): `execute_sql` appears in
//! `compiler.execute_sql(...)`, but `230` does not appear in `12300`.

/// Whether a byte can be part of a word.
fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-')
}

/// Whether a trimmed word is an identifier (see the [module docs](self)).
pub fn is_identifier(word: &str) -> bool {
    let b = word.as_bytes();
    if b.len() < 2 {
        return false;
    }
    let has_letter = b.iter().any(u8::is_ascii_alphabetic);
    if !has_letter {
        return b.iter().all(u8::is_ascii_digit);
    }
    if b.contains(&b'/') || b.contains(&b'_') {
        return true;
    }
    if b.len() >= 4
        && b.windows(3)
            .any(|w| w[1] == b'.' && w[0].is_ascii_alphanumeric() && w[2].is_ascii_alphanumeric())
    {
        return true;
    }
    if b.windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
    {
        return true;
    }
    b.len() >= 3 && b.iter().any(u8::is_ascii_digit)
}

/// The identifiers in `text`, in order of appearance, with repeats.
pub fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    // Word bytes are ASCII, so splitting on every other character gives the words.
    text.split(|c: char| !(c.is_ascii() && word_byte(c as u8)))
        .map(|word| word.trim_matches(|c| matches!(c, '.' | '/' | '-')))
        .filter(|word| is_identifier(word))
}

/// The keys under which an identifier word of a request counts as present: the word and
/// every run of its whole `.`/`/`-separated parts (`compiler.execute_sql` also gives
/// `compiler` and `execute_sql`; `src/parser.rs` gives `src/parser`, `parser.rs`, `rs`, ...).
/// A reference survives if it is one of the keys of some word of the request. At most 16
/// parts of a word are considered.
pub fn presence_keys(word: &str) -> impl Iterator<Item = &str> {
    let seps: Vec<usize> = word
        .bytes()
        .enumerate()
        .filter(|(_, b)| matches!(b, b'.' | b'/'))
        .map(|(i, _)| i)
        .take(15)
        .collect();
    let mut starts = vec![0];
    starts.extend(seps.iter().map(|p| p + 1));
    // Past 16 parts, the rest of the word is one part.
    let mut ends = seps.clone();
    ends.push(word.len());
    let n = starts.len();
    (0..n)
        .flat_map(move |i| (i..n).map(move |j| (i, j)))
        .filter_map(move |(i, j)| {
            let (s, e) = (starts[i], ends[j]);
            (s < e).then(|| word.get(s..e)).flatten()
        })
}

#[cfg(test)]
mod tests;
