//! Lines the agent acted on: what the agent typed after an entry was observed (the
//! identifiers, quoted strings and lines of code of its later turns and tool calls)
//! points at the lines of the entry that hold them.
//!
//! A summary keeps those lines verbatim, most recently acted on first: a model can copy
//! a line it is about to edit out of a summary, not out of a list of names.

use foldhash::{HashMap, HashMapExt};

mod log;

pub(crate) use log::TypedLog;

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

/// What the turns of one run typed (the run's own turns and those after it), read from
/// the [`TypedLog`] of the turns of every run of a compaction: each thing typed with
/// its most recent turn among the run's turns.
#[derive(Debug)]
pub(crate) struct Typed<'l, 'a> {
    log: &'l TypedLog<'a>,
    /// The ids of the run's entries, context and later turns, sorted: the turns that
    /// count for it.
    turns: Vec<Recency>,
    /// Quoted strings the run's turns typed, the most recent [`MAX_QUOTED`], each with
    /// its latest turn and its searcher.
    quoted: Vec<(memchr::memmem::Finder<'a>, Recency)>,
    /// Whether the run's turns typed nothing.
    empty: bool,
}

/// Why a line counts as acted on, as [`Typed::line`] reads it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Acted {
    /// The most recent turn that typed what the line holds.
    pub(crate) recency: Recency,
    /// How many typed things the line holds (a whole typed line counts 4).
    pub(crate) strength: u16,
}

impl<'l, 'a> Typed<'l, 'a> {
    /// What the turns among `turns` (the ids of a run's entries, context and later
    /// turns) typed, as `log` holds it.
    pub(crate) fn of(log: &'l TypedLog<'a>, mut turns: Vec<Recency>) -> Self {
        turns.sort_unstable();
        turns.dedup();
        let member = |r: &Recency| turns.binary_search(r).is_ok();
        let empty = !log.typed_turns.iter().any(member);
        // The most recent quoted strings, each once (its latest turn among the run's).
        let mut seen = foldhash::HashSet::default();
        let quoted = log
            .quoted
            .iter()
            .rev()
            .filter(|(q, r)| member(r) && seen.insert(*q))
            .take(MAX_QUOTED)
            .map(|(q, r)| (memchr::memmem::Finder::new(q.as_bytes()), *r))
            .collect();
        Typed {
            log,
            turns,
            quoted,
            empty,
        }
    }

    /// Whether the turn `r` counts for this run.
    fn member(&self, r: Recency) -> bool {
        self.turns.binary_search(&r).is_ok()
    }

    /// The latest of `typed_by` (ascending turn ids) that counts for this run and came
    /// after `seen`.
    fn latest(&self, typed_by: Option<&Vec<Recency>>, seen: Recency) -> Option<Recency> {
        typed_by?
            .iter()
            .rev()
            .take_while(|&&r| r > seen)
            .copied()
            .find(|&r| self.member(r))
    }

    /// Whether nothing was typed.
    pub(crate) fn is_empty(&self) -> bool {
        self.empty
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
        self.line_with(line, None, seen, common)
    }

    /// [`line`](Self::line), given the typed words of the line if they are known (what
    /// [`typed_words`](Self::typed_words) gave for it): only those are looked up.
    pub(crate) fn line_with(
        &self,
        line: &str,
        typed: Option<&[&str]>,
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
        if let Some(r) = self.latest(self.log.lines.get(t), seen) {
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
        let words: &mut dyn Iterator<Item = &str> = match typed {
            Some(words) => &mut words.iter().copied(),
            None => &mut code_words(t),
        };
        for w in words {
            if matched.contains(&w) || common(w) {
                continue;
            }
            if let Some(r) = self.latest(self.log.words.get(w), seen) {
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
    pub(crate) fn typed_words<'w>(&self, line: &'w str, out: &mut Vec<&'w str>) {
        out.clear();
        for w in code_words(line) {
            let typed = self
                .log
                .words
                .get(w)
                .is_some_and(|by| by.iter().rev().any(|&r| self.member(r)));
            if typed && !out.contains(&w) {
                out.push(w);
            }
        }
    }
}

/// Whether a word is a file's path (`./a/b.py`, `/testbed/x`, `src/lib.rs`), not a
/// pattern (`s/old/new/`).
fn is_path(w: &str) -> bool {
    let b = w.as_bytes();
    if !b.contains(&b'/') {
        return false; // most words: no search for an extension
    }
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
        .filter(|c| {
            let edge = |c: char| matches!(c, '\'' | '"' | '`' | '(' | ')' | '[' | ']' | '{' | '}');
            !is_path(c.trim_matches(|c: char| edge(c) || matches!(c, ',' | ';' | ':' | '.')))
        })
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
/// The typed words of each line are kept, so that a line is read once.
#[derive(Debug, Default)]
pub(crate) struct Frequent<'l> {
    counts: HashMap<&'l str, u32>,
    limit: u32,
    /// The typed words of every line, in order, and where each line's end.
    words: Vec<&'l str>,
    ends: Vec<u32>,
}

impl<'l> Frequent<'l> {
    /// Counts, for each typed word, the lines of `lines` that hold it.
    pub(crate) fn of(typed: &Typed<'_, '_>, lines: &[&'l str]) -> Self {
        let mut counts: HashMap<&'l str, u32> = HashMap::new();
        let (mut words, mut all, mut ends) = (Vec::new(), Vec::new(), Vec::new());
        ends.reserve(lines.len());
        for line in lines {
            typed.typed_words(line, &mut words);
            for w in &words {
                *counts.entry(*w).or_insert(0) += 1;
            }
            all.extend_from_slice(&words);
            ends.push(u32::try_from(all.len()).unwrap_or(u32::MAX));
        }
        let limit = u32::try_from(lines.len() / 10).unwrap_or(u32::MAX).max(3);
        Frequent {
            counts,
            limit,
            words: all,
            ends,
        }
    }

    /// The typed words of line `k` of the lines counted, if it was one of them.
    pub(crate) fn typed(&self, k: usize) -> Option<&[&'l str]> {
        let end = *self.ends.get(k)? as usize;
        let start = k
            .checked_sub(1)
            .map_or(Some(0), |p| self.ends.get(p).map(|&e| e as usize))?;
        self.words.get(start..end)
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
    fn after_turn(turn: &str, check: impl FnOnce(&Typed<'_, '_>)) {
        let mut h = History::new();
        h.append(fuzzy!(user: "the output the turns act on"));
        let a = h.append(fuzzy!(assistant: turn));
        let log = TypedLog::new([h.entry(a).unwrap()]);
        check(&Typed::of(&log, vec![a.0]));
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
        let log = TypedLog::new([h.entry(a).unwrap()]);
        let typed = Typed::of(&log, vec![a.0]);
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
        let log = TypedLog::new([h.entry(a).unwrap(), h.entry(b).unwrap()]);
        let typed = Typed::of(&log, vec![a.0, b.0]);
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
