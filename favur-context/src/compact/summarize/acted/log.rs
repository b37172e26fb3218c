//! What the agent typed, read once for every run of a compaction: each identifier, line
//! of code and quoted string with the turns that typed it. The runs of one compaction
//! share most of their later turns; each run's [`Typed`](super::Typed) reads this log
//! through its own turns instead of reading the turns' text again.

use foldhash::{HashMap, HashMapExt};

use super::{
    COMMON, MAX_TYPED_BYTES, MIN_TYPED_LINE, Recency, code_words, is_distinct, quoted_strings,
};
use crate::compact::summarize::{name_scan, text};
use crate::model::entry::Entry;
use crate::model::message::{Arguments, Part, Role};

/// What a set of assistant turns typed (their text and tool-call arguments).
#[derive(Debug, Default)]
pub(crate) struct TypedLog<'a> {
    /// Identifiers, each with the turns that typed it, ascending.
    pub(super) words: HashMap<&'a str, Vec<Recency>>,
    /// Lines of code (trimmed), each with the turns that typed it, ascending.
    pub(super) lines: HashMap<&'a str, Vec<Recency>>,
    /// Quoted strings with the turn that typed them, in the order typed.
    pub(super) quoted: Vec<(&'a str, Recency)>,
    /// The turns that typed anything, ascending.
    pub(super) typed_turns: Vec<Recency>,
}

impl<'a> TypedLog<'a> {
    /// What the assistant turns among `turns` typed (each turn read once, however often
    /// it is given; summaries are not read).
    pub(crate) fn new(turns: impl IntoIterator<Item = &'a Entry>) -> Self {
        let mut log = TypedLog {
            words: HashMap::with_capacity(256),
            lines: HashMap::with_capacity(64),
            quoted: Vec::new(),
            typed_turns: Vec::new(),
        };
        let mut turns: Vec<&'a Entry> = turns
            .into_iter()
            .filter(|e| e.message().role == Role::Assistant && !e.kind().is_summary())
            .collect();
        // The earliest first, so each list of turns is ascending.
        turns.sort_unstable_by_key(|e| e.id());
        turns.dedup_by_key(|e| e.id());
        for e in turns {
            let turn = e.id().0;
            let mut reading = Reading {
                log: &mut log,
                turn,
                budget: MAX_TYPED_BYTES,
                typed: false,
            };
            for part in &e.message().parts {
                match part {
                    Part::Text(t) => reading.text(t),
                    Part::ToolCall(c) => match &c.arguments {
                        Arguments::Json(v) => reading.json(v),
                        Arguments::Invalid(raw) => reading.code(raw),
                    },
                    _ => {}
                }
            }
            if reading.typed {
                log.typed_turns.push(turn);
            }
        }
        log
    }
}

/// One turn being read into a log.
struct Reading<'l, 'a> {
    log: &'l mut TypedLog<'a>,
    turn: Recency,
    /// Bytes of the turn's code still read.
    budget: usize,
    /// Whether it typed anything.
    typed: bool,
}

impl<'a> Reading<'_, 'a> {
    /// Every string value of a tool call's arguments, read as code.
    fn json(&mut self, v: &'a serde_json::Value) {
        match v {
            serde_json::Value::String(s) => self.code(s),
            serde_json::Value::Array(a) => a.iter().for_each(|x| self.json(x)),
            serde_json::Value::Object(o) => o.values().for_each(|x| self.json(x)),
            _ => {}
        }
    }

    /// A text the agent wrote: fenced blocks and `inline code` are code, the rest prose
    /// (only its marked names count: `snake_case`, `CamelCase`, dotted names, paths).
    fn text(&mut self, written: &'a str) {
        let mut in_fence = false;
        for line in text::text_lines(written) {
            if text::trim_start(line).starts_with("```") {
                in_fence = !in_fence;
                continue;
            }
            if in_fence {
                self.code(line);
                continue;
            }
            // Inline code: the odd pieces between backticks.
            for (k, piece) in line.split('`').enumerate() {
                if k % 2 == 1 {
                    self.code(piece);
                } else {
                    for name in name_scan::names(piece) {
                        self.words(name, true);
                    }
                }
            }
        }
    }

    /// Code the agent typed: its lines, quoted strings and identifiers.
    fn code(&mut self, code: &'a str) {
        for line in text::text_lines(code) {
            if self.budget < line.len() {
                return;
            }
            self.budget -= line.len();
            let t = text::trim(line);
            if t.len() >= MIN_TYPED_LINE {
                push(&mut self.log.lines, t, self.turn);
                self.typed = true;
            }
            let before = self.log.quoted.len();
            let turn = self.turn;
            self.log.quoted.extend(quoted_strings(t).map(|q| (q, turn)));
            self.typed |= self.log.quoted.len() > before;
            self.words(t, false);
        }
    }

    /// The [`code_words`] of `written` (at least three bytes, not [`COMMON`]); only the
    /// [`is_distinct`] ones if `distinct_only` (prose names few things by a common word).
    fn words(&mut self, written: &'a str, distinct_only: bool) {
        for w in code_words(written) {
            if !COMMON.contains(&w) && (!distinct_only || is_distinct(w)) {
                push(&mut self.log.words, w, self.turn);
                self.typed = true;
            }
        }
    }
}

/// Records that `turn` typed `key` (once per turn: turns come in ascending order).
fn push<'a>(map: &mut HashMap<&'a str, Vec<Recency>>, key: &'a str, turn: Recency) {
    let by = map.entry(key).or_default();
    if by.last() != Some(&turn) {
        by.push(turn);
    }
}
