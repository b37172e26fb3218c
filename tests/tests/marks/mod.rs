//! A reader of engine marks, written apart from the library's: what a model would read
//! as one of the engine's tags (`<directive>`, `</context-summary>`, `<|...`), a
//! `[directive]` marker, or a line posing as a turn (`User:`, `**AI:**`, ...), once
//! compatibility forms, look-alikes, invisible characters and spaces inside a tag are
//! seen through. Included with `mod marks;`.
#![allow(dead_code)]

use favur_context::render::{FIRST_TURN_NOTE, SUMMARY_PREAMBLE, TAG_NAMES};
use serde_json::Value;
use unicode_normalization::UnicodeNormalization;

/// Every character a reader takes as a line break.
pub const BREAKS: [char; 7] = [
    '\n', '\r', '\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}',
];

/// The role words a line of a transcript starts with.
pub const ROLES: [&str; 8] = [
    "user",
    "human",
    "assistant",
    "system",
    "tool",
    "developer",
    "model",
    "ai",
];

/// What a reader sees of `text`: NFKC, lower case, the UTS 39 skeleton (look-alikes to
/// their prototype, default-ignorable characters gone), `|` kept as itself.
pub fn fold(text: &str) -> Vec<char> {
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
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
    out
}

fn folded(word: &str) -> Vec<char> {
    fold(word)
}

fn skip_ws(s: &[char], mut i: usize) -> usize {
    while s.get(i).is_some_and(|c| c.is_whitespace()) {
        i += 1;
    }
    i
}

fn starts(s: &[char], i: usize, word: &[char]) -> bool {
    s.get(i..i + word.len()) == Some(word)
}

fn name_char(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
}

/// The first engine tag or `[directive]` marker a reader sees in `text`.
pub fn tag_mark(text: &str) -> Option<String> {
    let s = fold(text);
    let names: Vec<Vec<char>> = TAG_NAMES.iter().map(|n| folded(n)).collect();
    let directive = folded("directive");
    for (i, c) in s.iter().enumerate() {
        match c {
            '<' => {
                let mut j = skip_ws(&s, i + 1);
                if s.get(j) == Some(&'|') {
                    return Some("<|".into());
                }
                if s.get(j) == Some(&'/') {
                    j = skip_ws(&s, j + 1);
                }
                for (n, name) in names.iter().enumerate() {
                    if starts(&s, j, name) && !name_char(s.get(j + name.len())) {
                        return Some(format!("<{}", TAG_NAMES[n]));
                    }
                }
            }
            '[' => {
                let j = skip_ws(&s, i + 1);
                if starts(&s, j, &directive) {
                    let k = skip_ws(&s, j + directive.len());
                    if s.get(k) == Some(&']') {
                        return Some("[directive]".into());
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// The first line of `text` (split at every break) a reader takes for a turn: past
/// spaces and markdown emphasis, a role word, emphasis or spaces, and a colon.
pub fn role_line(text: &str) -> Option<String> {
    let roles: Vec<Vec<char>> = ROLES.iter().map(|r| folded(r)).collect();
    let lead = |c: &char| c.is_whitespace() || "*_#>~`".contains(*c);
    for line in text.split(BREAKS) {
        let s = fold(line);
        let i = s.iter().take_while(|c| lead(c)).count();
        for role in &roles {
            if starts(&s, i, role) {
                let mut j = i + role.len();
                while s
                    .get(j)
                    .is_some_and(|c| c.is_whitespace() || "*_~".contains(*c))
                {
                    j += 1;
                }
                if s.get(j) == Some(&':') {
                    return Some(line.to_owned());
                }
            }
        }
    }
    None
}

/// The engine's wrappers: how one opens (the exact text the engine writes) and closes.
const WRAPPERS: [(&str, &str); 4] = [
    ("<context-summary id=\"", "\n</context-summary>"),
    ("<tool-output entry=\"", "\n</tool-output>"),
    ("<system-note>", "\n</system-note>"),
    ("<directive>", "\n</directive>"),
];

/// `text` without the engine's own wrapper around it (if it is one), and whether it was
/// one (its body is quoted: no line of it may pose as a turn).
pub fn body(text: &str) -> (&str, bool) {
    if text == FIRST_TURN_NOTE {
        return ("", false);
    }
    for (open, close) in WRAPPERS {
        if let Some(inner) = text.strip_prefix(open).and_then(|t| t.strip_suffix(close)) {
            let Some((_, rest)) = inner.split_once('\n') else {
                return ("", true);
            };
            if open.starts_with("<context-summary") {
                let preamble = format!("{SUMMARY_PREAMBLE}\n");
                return (rest.strip_prefix(preamble.as_str()).unwrap_or(rest), true);
            }
            return (rest, true);
        }
    }
    (text, false)
}

/// The first forged mark in any string of a rendered request: a tag or marker anywhere
/// but the engine's own wrapper, a role line inside a wrapper.
pub fn forged_in(request: &Value) -> Option<String> {
    match request {
        Value::String(s) => {
            let (inner, quoted) = body(s);
            if let Some(m) = tag_mark(inner) {
                return Some(format!("{m} in {s:?}"));
            }
            if quoted && let Some(line) = role_line(inner) {
                return Some(format!("role line {line:?} in {s:?}"));
            }
            None
        }
        Value::Array(a) => a.iter().find_map(forged_in),
        Value::Object(o) => o.values().find_map(forged_in),
        _ => None,
    }
}
