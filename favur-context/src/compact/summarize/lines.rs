//! The reading of one entry's lines, line by line: each line's kind (what a summary
//! keeps it for), its number, the definitions that enclose it, and whether the agent
//! acted on it since.
//!
//! What flows through: an entry's texts, line by line → its candidate [`Item`]s, its
//! status, its counts, and the lines its hot regions are drawn from ([`Raw`]).

use std::borrow::Cow;

use super::acted::{Frequent, Typed};
use super::item::{Item, MAX_VERBATIM_BYTES};
use super::line_kind::{self, LineKind};
use super::numbers::{Numbering, kept_definition, kept_line, verbatim_line};
use super::producers::{self, Producers, cut, cut_borrowed, cut_cow};
use super::regions::Raw;
use super::text;
use crate::model::entry::Entry;
use crate::model::message::Role;

/// What the digest of each entry reads: how a summary is configured and what the agent
/// did after the run.
pub(super) struct Reading<'r, 'a> {
    pub(super) producers: &'r Producers<'a>,
    pub(super) typed: &'r Typed<'r, 'a>,
    /// Lines of a person's or the agent's text kept at most.
    pub(super) head_lines: usize,
    /// Longest line kept (but acted-on lines), in bytes.
    pub(super) limit: usize,
}

/// The reading of one entry's lines, line by line.
pub(super) struct Lines<'r, 'a> {
    entry: &'a Entry,
    reading: &'r Reading<'r, 'a>,
    prose: bool,
    pub(super) items: Vec<Item<'a>>,
    pub(super) status: Option<String>,
    /// Lines read, lines of an output that say something, and the lead lines of prose
    /// kept.
    pub(super) total: usize,
    pub(super) output: usize,
    leads: usize,
    numbering: Numbering,
    frequent: Frequent<'a>,
    /// The definitions that enclose the line read: indent and `order`, outermost first.
    enclosing: Vec<(usize, usize)>,
    /// Whether the last line that says something was a definition (the next may be its
    /// docstring).
    after_definition: bool,
    /// How deeply the last definition read is nested (its docstring's depth too), and
    /// its order.
    last_depth: u8,
    last_definition: usize,
    /// The last line read, if it was a doc comment (`///`, `/**`, `#`) that a
    /// definition may follow: its order, number and code.
    doc_above: Option<(usize, Option<usize>, &'a str)>,
    /// The first lines of an output that no rule keeps by their kind (as many as lead
    /// lines of prose), as they would be kept: its lead lines if the output is short.
    pub(super) short: Vec<(usize, Cow<'a, str>)>,
    /// The lines of an output the agent may have acted on, as read (for its hot regions).
    pub(super) raw: Vec<Raw<'a>>,
    /// Whether to keep them.
    record: bool,
    /// Whether the output is a recursive listing (`ls -R`), and the directory whose
    /// names it lists now (its last `./dir:` header): a name is kept with it.
    recursive: bool,
    dir: Option<&'a str>,
    /// Whether the output is a search's, numbered by it (`grep -n`, `-nC 5` of one
    /// file): a line it matched (`585:`, not a context line `584-`) is a hit.
    numbered_search: bool,
    /// The item of the Python frame (`File "a.py", line 3, in f`) read on the line
    /// before: the source line printed under it joins it.
    frame: Option<usize>,
    /// The last frame joined by its source line, and its text before: the line leaves
    /// it when a frame follows, so that only the innermost frame of a traceback (where
    /// it failed) shows its line.
    joined: Option<(usize, Cow<'a, str>)>,
}

impl<'r, 'a> Lines<'r, 'a> {
    pub(super) fn new(
        entry: &'a Entry,
        reading: &'r Reading<'r, 'a>,
        prose: bool,
        texts: &[&'a str],
    ) -> Self {
        // Lines the agent may have acted on: those of an output (or of an earlier summary).
        let observed = !prose && !reading.typed.is_empty();
        let all: Vec<&'a str> = if observed {
            texts.iter().flat_map(|t| text::text_lines(t)).collect()
        } else {
            Vec::new()
        };
        let command = reading.producers.command_of(entry);
        let numbering = Numbering::of(texts, command);
        let numbered_search =
            !prose && numbering.own() && command.is_some_and(producers::is_search);
        // What each line holds as a line of code (without its own number), as
        // `keep_acted` reads it: its typed words are counted once and kept.
        let codes: Vec<&'a str> = (all.iter())
            .map(|l| text::trim(super::numbers::split_number(l, &numbering).1))
            .collect();
        Lines {
            entry,
            reading,
            prose,
            items: Vec::new(),
            status: None,
            total: 0,
            output: 0,
            leads: 0,
            numbering,
            frequent: Frequent::of(reading.typed, &codes),
            enclosing: Vec::new(),
            after_definition: false,
            last_depth: 0,
            last_definition: 0,
            doc_above: None,
            short: Vec::new(),
            raw: Vec::with_capacity(if observed { all.len() } else { 0 }),
            record: observed && !entry.kind().is_summary(),
            recursive: command.is_some_and(producers::is_recursive_listing),
            dir: None,
            numbered_search,
            frame: None,
            joined: None,
        }
    }

    pub(super) fn read_text(&mut self, t: &'a str) {
        let (mut in_fence, mut in_warning) = (false, false);
        self.numbering.start_text();
        for line in text::text_lines(t) {
            self.total += 1;
            let trimmed = text::trim(line);
            let tags = super::numbers::wrapper_tags(trimmed);
            let number = self.numbering.next_line(line, tags.as_deref());
            // The harness's note inside an observation (mini-swe-agent's `<warning>` that
            // the output was too long) is not the tool's output: nothing of it is kept.
            if let Some(tags) = tags {
                for tag in tags {
                    in_warning = match tag {
                        "<warning>" => true,
                        "</warning>" => false,
                        _ => in_warning,
                    };
                }
            } else if in_warning {
                continue;
            }
            if trimmed.starts_with("```") {
                in_fence = !in_fence;
                continue;
            }
            if in_fence && self.entry.message().role == Role::Assistant {
                continue; // the command is in the header
            }
            if self.entry.kind().is_summary() {
                self.read_summary_line(trimmed);
            } else {
                self.read_line(line, trimmed, number);
            }
        }
    }

    /// A line of an earlier summary: its headers and the lines it kept verbatim stay
    /// candidates; the rest is read like any output.
    fn read_summary_line(&mut self, trimmed: &'a str) {
        let order = self.total;
        if trimmed.starts_with('#') {
            let text = cut_borrowed(trimmed, self.reading.limit);
            self.push(LineKind::Error, order, text);
            return;
        }
        if trimmed.starts_with("names:") || trimmed.starts_with("files:") {
            return; // its names are read with the others
        }
        if super::numbers::is_kept_verbatim(trimmed) {
            // Acted on when it was summarized: it stays a candidate, ranked by what the
            // agent typed since (or after every line acted on since).
            let common = |w: &str| self.frequent.is_common(w);
            let acted = self
                .reading
                .typed
                .line(trimmed, self.entry.id().0, &common)
                .unwrap_or_default();
            let text = cut_borrowed(trimmed, MAX_VERBATIM_BYTES);
            self.items.push(Item {
                acted: Some(acted),
                ..Item::line(LineKind::Plain, order, text)
            });
            return;
        }
        let content = trimmed
            .strip_prefix("! ")
            .or_else(|| trimmed.strip_prefix("| "))
            .unwrap_or(trimmed);
        self.read_line(content, content, None);
    }

    /// One line (`trimmed`: the line trimmed; `number`: its line number if known).
    fn read_line(&mut self, line: &'a str, trimmed: &'a str, number: Option<usize>) {
        if self.directory_header(trimmed) {
            return;
        }
        // What the agent or a person wrote is prose: its lead lines and its names are
        // kept, not its "error" words.
        let kind = if self.prose {
            if trimmed.is_empty() {
                LineKind::Noise
            } else {
                LineKind::Plain
            }
        } else {
            line_kind::classify(trimmed)
        };
        let (_, code) = super::numbers::split_number(line, &self.numbering);
        let indent = code.len() - text::trim_start(code).len();
        // The definitions a definition read here would be nested in.
        let depth = self.enclosing.iter().filter(|&&(i, _)| i < indent).count();
        let depth = u8::try_from(depth).unwrap_or(u8::MAX);
        let kind = self.file_kind(kind, code);
        let kind = self.match_or(kind, line);
        let kind = self.doc_or(kind, code, (number, depth));
        if kind == LineKind::Definition {
            while self.enclosing.last().is_some_and(|&(i, _)| i >= indent) {
                self.enclosing.pop();
            }
            self.last_depth = depth;
            self.last_definition = self.total;
        }
        if !self.prose && !matches!(kind, LineKind::Noise | LineKind::Status) {
            self.output += 1;
        }
        let context = (indent > 0)
            .then(|| self.enclosing.iter().rev().find(|&&(i, _)| i < indent))
            .flatten()
            .map(|&(_, o)| o);
        if self.record {
            self.raw.push(Raw {
                order: self.total,
                number,
                code,
                indent,
                kind,
                context,
            });
        }
        let read = Read {
            kind,
            trimmed,
            code,
            number,
            context,
            depth: if kind == LineKind::Doc {
                self.last_depth
            } else {
                depth
            },
        };
        let frame = self.frame.take();
        if let Some(at) = frame.filter(|_| kind == LineKind::Plain && !trimmed.is_empty()) {
            self.join_frame(at, trimmed);
        }
        if !self.keep_acted(&read) {
            self.keep_by_kind(&read);
        }
        if kind == LineKind::Definition {
            self.enclosing.push((indent, self.total));
        }
    }

    /// Whether `trimmed` is a directory's header in a recursive listing (`./src/parse:`),
    /// which heads the names listed under it; it becomes the directory read.
    fn directory_header(&mut self, trimmed: &'a str) -> bool {
        let Some(dir) = trimmed.strip_suffix(':') else {
            return false;
        };
        if !self.recursive || self.prose || dir.is_empty() || text::has_whitespace(dir) {
            return false;
        }
        let dir = dir.trim_start_matches("./").trim_end_matches('/');
        self.dir = (!dir.is_empty() && dir != ".").then_some(dir);
        true
    }

    /// The kind of a line as its entry reads it: a line of a source file is the file's
    /// text (a `raise ValueError` line, a string naming a path, `@attr.s` are code, not an
    /// error, a hit or a listing), past an elision too; what the command itself says
    /// (`cat: a.py: No such file or directory`) is not.
    fn file_kind(&self, kind: LineKind, code: &str) -> LineKind {
        let printed = matches!(
            kind,
            LineKind::Error
                | LineKind::Outcome
                | LineKind::Location
                | LineKind::Hit
                | LineKind::Path
        );
        if !(printed && self.numbering.source()) || producers::is_tool_message(code) {
            kind
        } else if line_kind::is_definition(code) {
            LineKind::Definition
        } else {
            LineKind::Plain
        }
    }

    /// `kind`, or [`LineKind::Hit`] for a line of code that a search of one file matched.
    fn match_or(&self, kind: LineKind, line: &str) -> LineKind {
        let code = matches!(kind, LineKind::Plain | LineKind::Definition);
        let matched = super::numbers::own_separator(line) == Some(b':');
        if code && matched && self.numbered_search {
            LineKind::Hit
        } else {
            kind
        }
    }

    /// `kind`, or [`LineKind::Doc`] for the first line of the docstring of the definition
    /// just read; keeps the doc comment right above a definition read now.
    fn doc_or(
        &mut self,
        kind: LineKind,
        code: &'a str,
        (number, depth): (Option<usize>, u8),
    ) -> LineKind {
        let trimmed = text::trim(code);
        if trimmed.is_empty() {
            return kind;
        }
        let after = std::mem::replace(&mut self.after_definition, kind == LineKind::Definition);
        let above = self.doc_above.take();
        if self.prose {
            return kind;
        }
        let doc = kind == LineKind::Plain && line_kind::is_doc_line(trimmed);
        if kind == LineKind::Definition
            && let Some((order, number, code)) = above
            && self.items.last().is_none_or(|it| it.order != order)
        {
            let doc = kept_definition(number, code);
            self.push_at(LineKind::Doc, order, doc, (depth, Some(self.total)));
        }
        if doc && !after {
            self.doc_above = Some((self.total, number, code));
        }
        if doc && after { LineKind::Doc } else { kind }
    }

    /// Keeps the line verbatim if the agent acted on it since (errors, outcomes and
    /// locations are kept by their kind, as they read); whether it did.
    fn keep_acted(&mut self, r: &Read<'a>) -> bool {
        let actable = matches!(
            r.kind,
            LineKind::Plain | LineKind::Definition | LineKind::Doc | LineKind::Hit
        );
        if self.prose || !actable {
            return false;
        }
        let common = |w: &str| self.frequent.is_common(w);
        let seen = self.entry.id().0;
        // The line's typed words as counted (the lines of an output, read in order).
        let k = self.total.checked_sub(1).filter(|_| self.record);
        let words = k.and_then(|k| self.frequent.typed(k));
        let code = text::trim(r.code);
        let Some(acted) = self.reading.typed.line_with(code, words, seen, &common) else {
            return false;
        };
        let text = verbatim_line(r.number, r.code, MAX_VERBATIM_BYTES);
        self.items.push(Item {
            acted: Some(acted),
            context: r.context,
            depth: r.depth,
            ..Item::line(r.kind, self.total, text)
        });
        true
    }

    /// Keeps what the line's kind keeps: its status in the header, a lead line of prose,
    /// a frame, a path, a definition (verbatim when numbered), an error, outcome or hit.
    fn keep_by_kind(&mut self, r: &Read<'a>) {
        let (order, limit, trimmed) = (self.total, self.reading.limit, r.trimmed);
        match r.kind {
            LineKind::Noise => {}
            LineKind::Status => {
                if self.status.is_none() {
                    self.status = Some(match line_kind::returncode(trimmed) {
                        Some(code) => format!("exit {code}"),
                        None => cut(trimmed, 60),
                    });
                }
            }
            LineKind::Plain if self.prose && self.leads < self.reading.head_lines.max(1) => {
                self.leads += 1;
                self.push(LineKind::Plain, order, cut_borrowed(trimmed, limit));
            }
            LineKind::Plain => {
                // A lead line of an output, if the output turns out to be short.
                let room = self.short.len() < self.reading.head_lines.max(1);
                if room && !self.entry.kind().is_summary() {
                    let text = kept_line(r.number, r.code, (limit, limit));
                    self.short.push((order, text));
                }
            }
            LineKind::Location => match line_kind::frame(trimmed) {
                Some(f) => {
                    if let Some((at, frame)) = self.joined.take()
                        && let Some(item) = self.items.get_mut(at)
                    {
                        item.text = frame;
                    }
                    self.frame = Some(self.items.len());
                    self.push(r.kind, order, Cow::Owned(f));
                }
                None => self.push(r.kind, order, cut_borrowed(trimmed, limit)),
            },
            LineKind::Path => {
                let name = line_kind::listed_path(trimmed);
                let text = match self.dir {
                    Some(dir) if !name.contains('/') => Cow::Owned(format!("{dir}/{name}")),
                    _ => name,
                };
                self.push(r.kind, order, cut_cow(text, limit));
            }
            LineKind::Definition | LineKind::Doc => {
                let of = (r.kind == LineKind::Doc).then_some(self.last_definition);
                let line = kept_definition(r.number, r.code);
                self.push_at(r.kind, order, line, (r.depth, of));
            }
            // A line a search of one file matched, verbatim with its number.
            LineKind::Hit if r.number.is_some() => {
                self.push(r.kind, order, kept_line(r.number, r.code, (limit, limit)));
            }
            // A total inside a banner (`=== 1 passed in 0.01s ===`), without the banner.
            LineKind::Outcome => {
                let total = trimmed.trim_matches(|c: char| c == '=' || c == ' ');
                let text = if total.is_empty() { trimmed } else { total };
                self.push(r.kind, order, cut_borrowed(text, limit));
            }
            LineKind::Error | LineKind::Hit => {
                self.push(r.kind, order, cut_borrowed(trimmed, limit));
            }
        }
    }

    /// Joins the source line Python printed under a frame to the frame's item
    /// (`src/a.py:3 in f: return g(x)`), within the line limit.
    fn join_frame(&mut self, at: usize, code: &str) {
        let limit = self.reading.limit;
        if let Some(item) = self.items.get_mut(at) {
            let mut joined = String::with_capacity(item.text.len() + 2 + code.len());
            joined.push_str(&item.text);
            joined.push_str(": ");
            joined.push_str(code);
            let text = Cow::Owned(cut(&joined, limit));
            self.joined = Some((at, std::mem::replace(&mut item.text, text)));
        }
    }

    fn push(&mut self, kind: LineKind, order: usize, text: Cow<'a, str>) {
        self.push_at(kind, order, text, (0, None));
    }

    /// Pushes a line of a definition nested `depth` deep: a definition, or the doc of
    /// the definition at `of` (its order).
    fn push_at(
        &mut self,
        kind: LineKind,
        order: usize,
        text: Cow<'a, str>,
        (depth, of): (u8, Option<usize>),
    ) {
        self.items.push(Item {
            context: of,
            depth,
            ..Item::line(kind, order, text)
        });
    }
}

/// One line as [`Lines`] reads it.
struct Read<'a> {
    kind: LineKind,
    /// The line trimmed.
    trimmed: &'a str,
    /// The line as printed, without its own number if it has one.
    code: &'a str,
    /// Its line number, if known.
    number: Option<usize>,
    /// The `order` of the definition that encloses it (none for an unindented line).
    context: Option<usize>,
    /// How deeply its definition is nested (see [`Item::depth`]).
    depth: u8,
}
