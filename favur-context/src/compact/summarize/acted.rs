//! Lines the agent acted on: what the agent typed after an entry was observed (the
//! identifiers, quoted strings and lines of code of its later turns and tool calls)
//! points at the lines of the entry that hold them.
//!
//! A summary keeps those lines verbatim, most recently acted on first: a model can copy
//! a line it is about to edit out of a summary, not out of a list of names.

use foldhash::{HashMap, HashMapExt};

use crate::model::entry::Entry;
use crate::model::message::{Arguments, Part, Role};

/// At most this many bytes of one later entry are read (a long heredoc is read up to it).
const MAX_TYPED_BYTES: usize = 16 * 1024;
/// Quoted strings kept, the most recent (each is searched for in every line).
const MAX_QUOTED: usize = 64;
/// A quoted string shorter than this points at too many lines.
const MIN_QUOTED: usize = 6;
/// A typed line of code shorter than this (trimmed) is not matched whole.
const MIN_TYPED_LINE: usize = 16;

/// Words of code that point at no line in particular.
const COMMON: [&str; 60] = [
    "and", "args", "assert", "async", "await", "break", "class", "cls", "const", "continue", "def",
    "dict", "elif", "else", "enum", "except", "false", "False", "fn", "for", "from", "function",
    "if", "impl", "import", "in", "int", "is", "kwargs", "lambda", "len", "let", "list", "mut",
    "new", "None", "not", "null", "or", "pass", "print", "pub", "raise", "return", "self", "Self",
    "str", "struct", "super", "the", "this", "true", "True", "try", "use", "var", "while", "with",
    "yield", "echo",
];

/// How recently the agent typed something: the id of the turn that typed it (a larger
/// value is more recent, and a line is acted on only by a turn recorded after it).
pub(crate) type Recency = u64;

/// What the agent typed after a run was observed, read once per summary.
#[derive(Debug, Default)]
pub(crate) struct Typed<'a> {
    /// Identifiers, each with the most recent turn that typed it.
    words: HashMap<&'a str, Recency>,
    /// Lines of code (trimmed), each with the most recent turn that typed it.
    lines: HashMap<&'a str, Recency>,
    /// Quoted strings, most recent last, with their searchers.
    quoted: Vec<(memchr::memmem::Finder<'a>, Recency)>,
}

/// Why a line counts as acted on, as [`Typed::line`] reads it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Acted {
    /// The most recent turn that typed what the line holds.
    pub(crate) recency: Recency,
    /// How many typed things the line holds (a whole typed line counts 4).
    pub(crate) strength: u16,
}

impl<'a> Typed<'a> {
    /// What the assistant turns among `turns` typed (their text and tool-call
    /// arguments), each by its id: the turns of a run and those after it.
    pub(crate) fn new(turns: &[&'a Entry]) -> Self {
        let mut typed = Typed {
            words: HashMap::with_capacity(256),
            lines: HashMap::with_capacity(64),
            quoted: Vec::new(),
        };
        let mut quoted: Vec<(&'a str, Recency)> = Vec::new();
        let mut turns: Vec<&'a Entry> = turns
            .iter()
            .copied()
            .filter(|e| e.message().role == Role::Assistant && !e.kind().is_summary())
            .collect();
        // The earliest first, so each thing typed keeps its latest turn.
        turns.sort_unstable_by_key(|e| e.id());
        turns.dedup_by_key(|e| e.id());
        for e in turns {
            let m = e.message();
            let turn = e.id().0;
            let mut budget = MAX_TYPED_BYTES;
            for part in &m.parts {
                match part {
                    Part::Text(t) => typed.read_text(t, turn, &mut budget, &mut quoted),
                    Part::ToolCall(c) => match &c.arguments {
                        Arguments::Json(v) => {
                            typed.read_json(v, turn, &mut budget, &mut quoted);
                        }
                        Arguments::Invalid(raw) => {
                            typed.read_code(raw, turn, &mut budget, &mut quoted);
                        }
                    },
                    _ => {}
                }
            }
        }
        // The most recent quoted strings, each once (its latest turn).
        quoted.reverse();
        let mut seen = foldhash::HashSet::default();
        quoted.retain(|(q, _)| seen.insert(*q));
        quoted.truncate(MAX_QUOTED);
        typed.quoted = quoted
            .into_iter()
            .map(|(q, r)| (memchr::memmem::Finder::new(q.as_bytes()), r))
            .collect();
        typed
    }

    /// Whether nothing was typed.
    pub(crate) fn is_empty(&self) -> bool {
        self.words.is_empty() && self.lines.is_empty() && self.quoted.is_empty()
    }

    /// Every string value of a tool call's arguments, read as code.
    fn read_json(
        &mut self,
        v: &'a serde_json::Value,
        turn: Recency,
        budget: &mut usize,
        quoted: &mut Vec<(&'a str, Recency)>,
    ) {
        match v {
            serde_json::Value::String(s) => self.read_code(s, turn, budget, quoted),
            serde_json::Value::Array(a) => {
                for x in a {
                    self.read_json(x, turn, budget, quoted);
                }
            }
            serde_json::Value::Object(o) => {
                for x in o.values() {
                    self.read_json(x, turn, budget, quoted);
                }
            }
            _ => {}
        }
    }

    /// A text the agent wrote: fenced blocks and `inline code` are code, the rest prose
    /// (only its marked names count: `snake_case`, `CamelCase`, dotted names, paths).
    fn read_text(
        &mut self,
        text: &'a str,
        turn: Recency,
        budget: &mut usize,
        quoted: &mut Vec<(&'a str, Recency)>,
    ) {
        let mut in_fence = false;
        for line in super::text::text_lines(text) {
            if super::text::trim_start(line).starts_with("```") {
                in_fence = !in_fence;
                continue;
            }
            if in_fence {
                self.read_code(line, turn, budget, quoted);
                continue;
            }
            // Inline code: the odd pieces between backticks.
            for (k, piece) in line.split('`').enumerate() {
                if k % 2 == 1 {
                    self.read_code(piece, turn, budget, quoted);
                } else {
                    for name in super::name_scan::names(piece) {
                        self.add_words(name, turn, true);
                    }
                }
            }
        }
    }

    /// Code the agent typed: its lines, quoted strings and identifiers.
    fn read_code(
        &mut self,
        code: &'a str,
        turn: Recency,
        budget: &mut usize,
        quoted: &mut Vec<(&'a str, Recency)>,
    ) {
        for line in super::text::text_lines(code) {
            if *budget < line.len() {
                return;
            }
            *budget -= line.len();
            let t = super::text::trim(line);
            if t.len() >= MIN_TYPED_LINE {
                self.lines.insert(t, turn);
            }
            quoted.extend(quoted_strings(t).map(|q| (q, turn)));
            self.add_words(t, turn, false);
        }
    }

    /// The [`code_words`] of `text` (at least three bytes, not [`COMMON`]); only the
    /// [`is_distinct`] ones if `distinct_only` (prose names few things by a common word).
    fn add_words(&mut self, text: &'a str, turn: Recency, distinct_only: bool) {
        for w in code_words(text) {
            if !COMMON.contains(&w) && (!distinct_only || is_distinct(w)) {
                self.words.insert(w, turn);
            }
        }
    }

    /// Whether the agent acted on `line` (of an entry recorded at `seen`) since: the
    /// latest turn after `seen` that typed what it holds (words of it, not `common` ones:
    /// too frequent in its entry to point at a line; the whole line; a quoted string in
    /// it), and how many such things it holds.
    pub(crate) fn line(
        &self,
        line: &str,
        seen: Recency,
        common: &impl Fn(&str) -> bool,
    ) -> Option<Acted> {
        let t = super::text::trim(line);
        if t.is_empty() {
            return None;
        }
        let mut best: Option<Recency> = None;
        let (mut strength, mut plain, mut distinct, mut exact) = (0u16, 0u16, false, false);
        let raise = |r: Recency, best: &mut Option<Recency>| {
            *best = Some(best.map_or(r, |b| b.max(r)));
        };
        if let Some(&r) = self.lines.get(t).filter(|&&r| r > seen) {
            raise(r, &mut best);
            strength += 4;
            exact = true;
        }
        for (finder, r) in self.quoted.iter().filter(|(_, r)| *r > seen) {
            if finder.find(t.as_bytes()).is_some() {
                raise(*r, &mut best);
                strength += 2;
                exact = true;
            }
        }
        let mut matched: Vec<&str> = Vec::new();
        for w in code_words(t) {
            if matched.contains(&w) || common(w) {
                continue;
            }
            if let Some(&r) = self.words.get(w).filter(|&&r| r > seen) {
                matched.push(w);
                raise(r, &mut best);
                strength += 1;
                if is_distinct(w) {
                    distinct = true;
                } else {
                    plain += 1;
                }
            }
        }
        // One plain word (`value`, `models`) points at too many lines on its own, and
        // plain words point at a line of code only (not at a sentence of a docstring); a
        // comment is acted on only if the agent typed it.
        let enough = exact || (!is_comment(t) && (distinct || (plain >= 2 && is_code(t))));
        match best {
            Some(recency) if enough => Some(Acted { recency, strength }),
            _ => None,
        }
    }

    /// The typed identifiers `line` holds (each once), to count how many lines of an
    /// entry each points at.
    pub(crate) fn typed_words<'l>(&self, line: &'l str, out: &mut Vec<&'l str>) {
        out.clear();
        for w in code_words(line) {
            if self.words.contains_key(w) && !out.contains(&w) {
                out.push(w);
            }
        }
    }
}

/// Whether a word is a file's path (`./a/b.py`, `/testbed/x`, `src/lib.rs`), not a
/// pattern (`s/old/new/`).
fn is_path(w: &str) -> bool {
    let b = w.as_bytes();
    let ext = w
        .rsplit('/')
        .next()
        .and_then(|f| f.rsplit_once('.'))
        .is_some_and(|(n, e)| !n.is_empty() && (1..=5).contains(&e.len()));
    b.contains(&b'/')
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || b"/._-".contains(&c))
        && (b.first() == Some(&b'/') || w.starts_with("./") || ext)
}

/// Whether a line reads as code rather than as a sentence: it holds `=`, a bracket,
/// `->`, `::` or an attribute access (`a.b`).
fn is_code(t: &str) -> bool {
    let b = t.as_bytes();
    b.iter().any(|c| b"=()[]{}".contains(c))
        || t.contains("->")
        || t.contains("::")
        || b.windows(2)
            .any(|w| w[0] == b'.' && (w[1].is_ascii_alphabetic() || w[1] == b'_'))
}

/// Whether a line of code is a comment or a docstring's edge (`#`, `//`, `/*`, `*`,
/// `"""`, `'''`).
fn is_comment(t: &str) -> bool {
    t.starts_with('#')
        || t.starts_with("//")
        || t.starts_with("/*")
        || t.starts_with("* ")
        || t.starts_with("\"\"\"")
        || t.starts_with("'''")
}

/// Whether an identifier names one thing rather than a common word: it holds `_`, a
/// digit or an uppercase letter after a lowercase one, or it is long.
fn is_distinct(w: &str) -> bool {
    let b = w.as_bytes();
    w.len() >= 8
        || b.iter().skip(1).any(|&c| c == b'_' || c.is_ascii_digit())
        || b.windows(2)
            .any(|x| x[0].is_ascii_lowercase() && x[1].is_ascii_uppercase())
}

/// The identifiers of `text` but those of a file's path (a path points at a file, not
/// at a line of it).
fn code_words(text: &str) -> impl Iterator<Item = &str> {
    text.split_ascii_whitespace()
        .filter(|c| !is_path(c.trim_matches(|c: char| "'\"`()[]{},;:.".contains(c))))
        .flat_map(identifiers)
}

/// The identifiers of `text`: ASCII letters, digits and `_`, starting with a letter or
/// `_`, at least three bytes.
pub(crate) fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| {
            w.len() >= 3
                && w.len() <= 80
                && w.as_bytes().first().is_some_and(|b| !b.is_ascii_digit())
        })
}

/// The strings quoted in `line` (`'...'` or `"..."`, closed on the line, at least
/// [`MIN_QUOTED`] bytes, at most 200).
fn quoted_strings(line: &str) -> impl Iterator<Item = &str> {
    let b = line.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            let q = b[i];
            i += 1;
            if q != b'\'' && q != b'"' {
                continue;
            }
            let start = i;
            let Some(len) = memchr::memchr(q, &b[start..]) else {
                i = b.len();
                return None;
            };
            i = start + len + 1;
            if (MIN_QUOTED..=200).contains(&len) {
                return line.get(start..start + len);
            }
        }
        None
    })
}

/// The words of an entry's lines that are too frequent to point at a line: those typed
/// words found in more than `max(3, lines / 10)` of its lines.
#[derive(Debug, Default)]
pub(crate) struct Frequent<'l> {
    counts: HashMap<&'l str, u32>,
    limit: u32,
}

impl<'l> Frequent<'l> {
    /// Counts, for each typed word, the lines of `lines` that hold it.
    pub(crate) fn of(typed: &Typed<'_>, lines: &[&'l str]) -> Self {
        let mut counts: HashMap<&'l str, u32> = HashMap::new();
        let mut words = Vec::new();
        for line in lines {
            typed.typed_words(line, &mut words);
            for w in &words {
                *counts.entry(*w).or_insert(0) += 1;
            }
        }
        let limit = u32::try_from(lines.len() / 10).unwrap_or(u32::MAX).max(3);
        Frequent { counts, limit }
    }

    /// Whether `w` is in too many lines to point at one.
    pub(crate) fn is_common(&self, w: &str) -> bool {
        self.counts.get(w).is_some_and(|&n| n > self.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{History, fuzzy, strict};

    /// Runs `check` on what `turn` (an assistant turn after an output) typed.
    fn after_turn(turn: &str, check: impl FnOnce(&Typed<'_>)) {
        let mut h = History::new();
        h.append(fuzzy!(user: "the output the turns act on"));
        let a = h.append(fuzzy!(assistant: turn));
        let later = [h.entry(a).unwrap()];
        check(&Typed::new(&later));
    }

    #[test]
    fn typed_identifiers_point_at_the_lines_that_hold_them() {
        after_turn(
            "THOUGHT: `_construct_form` builds the pk key wrongly.\n\n```bash\nsed -i 's/pk_key = x/pk_key = y/' a.py\n```",
            |typed| {
                let none = |_: &str| false;
                let hit = typed
                    .line("    def _construct_form(self, i, **kwargs):", 0, &none)
                    .unwrap();
                assert_eq!(hit.recency, 1);
                assert!(
                    typed
                        .line("    pk_key = '%s-%s' % (i, j)", 0, &none)
                        .is_some()
                );
                assert_eq!(typed.line("    return self.forms", 0, &none), None);
                // A common word alone points at nothing.
                assert_eq!(typed.line("    def build(self):", 0, &none), None);
            },
        );
    }

    #[test]
    fn a_turn_recorded_before_a_line_does_not_act_on_it() {
        let mut h = History::new();
        let a = h.append(fuzzy!(assistant: "I will read `compute_total` next."));
        let later = [h.entry(a).unwrap()];
        let typed = Typed::new(&later);
        let none = |_: &str| false;
        let line = "    total = compute_total(items)";
        // A line of an entry recorded after the turn is not acted on by it.
        assert_eq!(typed.line(line, a.0, &none), None);
        assert_eq!(typed.line(line, a.0 + 1, &none), None);
    }

    #[test]
    fn quoted_strings_and_whole_lines_count_and_the_latest_turn_wins() {
        let mut h = History::new();
        h.append(fuzzy!(user: "the output the turns act on"));
        let a = h.append(strict!(tool_call: "c1", "bash", serde_json::json!({"command": "grep -n \"connection refused\" log.txt"})));
        let b = h.append(strict!(tool_call: "c2", "bash", serde_json::json!({"command": "cat <<'EOF' > x.py\n        result = compute(alpha, beta)\nEOF"})));
        let later = [h.entry(a).unwrap(), h.entry(b).unwrap()];
        let typed = Typed::new(&later);
        let none = |_: &str| false;
        let q = typed
            .line("ERROR: connection refused by peer", 0, &none)
            .unwrap();
        assert_eq!(q.recency, 1);
        let l = typed
            .line("    result = compute(alpha, beta)", 0, &none)
            .unwrap();
        assert_eq!(l.recency, 2);
        assert!(l.strength >= 4);
    }

    #[test]
    fn words_in_many_lines_are_common() {
        after_turn("```bash\necho queryset_filter\n```", |typed| {
            let lines: Vec<&str> = (0..5).map(|_| "x = queryset_filter(y)").collect();
            let frequent = Frequent::of(typed, &lines);
            assert!(frequent.is_common("queryset_filter"));
            let common = |w: &str| frequent.is_common(w);
            assert_eq!(typed.line("x = queryset_filter(y)", 0, &common), None);
        });
    }

    #[test]
    fn plain_words_point_at_code_not_at_sentences() {
        after_turn("```bash\nmerge lists --order\n```", |typed| {
            let none = |_: &str| false;
            assert_eq!(
                typed.line("Merge two lists keeping their relative order.", 0, &none),
                None
            );
            assert!(typed.line("order = merge(lists)", 0, &none).is_some());
        });
    }

    #[test]
    fn paths_point_at_no_line_but_patterns_do() {
        assert!(is_path("./django/forms/widgets.py"));
        assert!(is_path("/testbed/setup.cfg"));
        assert!(!is_path("'s/pk_key"));
        assert!(!is_path("x/pk_key"));
        let words: Vec<&str> =
            code_words("Running tests in astropy/table/tests/test_mixin.py. done").collect();
        assert_eq!(words, ["Running", "tests", "done"]);
    }

    #[test]
    fn quoted_strings_are_read_between_their_quotes() {
        let q: Vec<&str> = quoted_strings("a = \"hello world\" + 'x' + 'abcdef").collect();
        assert_eq!(q, ["hello world"]);
    }
}
