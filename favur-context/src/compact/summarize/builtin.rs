//! The built-in summarizer: deterministic, no model, no network.

use foldhash::{HashMap, HashSet};
use std::borrow::Cow;
use std::fmt::Write as _;

use super::lines::{self, LineKind};
use super::names::{self, EntryNames, Shown};
use super::producers::{
    Producer, Producers, command_line, cut, cut_borrowed, cut_cow, fenced_command, one_line,
};
use super::{SummarizeError, Summarizer, SummaryRequest};
use crate::model::entry::{Entry, EntryId};
use crate::model::message::{Part, Role};

/// The built-in summarizer: deterministic, no model, no network.
///
/// A summary says, for every entry it replaces, **what produced it** (the tool and its
/// command or arguments; for a plain-chat observation, the command of the turn before it),
/// its exit status and size. Then, as the budget allows, it keeps what the agent refers
/// back to, in this order, giving each entry its turn so that one long entry cannot take
/// the room of the others:
///
/// 1. error lines (errors, exceptions, panics, tracebacks), failing tests and test totals;
/// 2. the first line of what the agent or a person wrote (its decision or request);
/// 3. locations: traceback frames as `file:line in function`, search hits as `file:line`;
/// 4. definitions seen in a file view, with their line numbers (`120: def parse(self)`);
/// 5. listed paths (a directory listing or `find` output keeps its paths, without the
///    `ls -l` columns);
/// 6. the names that the lines kept do not show (paths, `snake_case`, `CamelCase`,
///    dotted and `a::b` names, test ids), each listed once per summary;
/// 7. what is left of the above.
///
/// A run that merged earlier summaries keeps what they kept: their lines are read like
/// any other text, their headers first.
///
/// The budget is read with the [`HeuristicCounter`](crate::HeuristicCounter)'s rule (about
/// four bytes a token, at least one token a word), so the text never needs more than
/// `budget_tokens` tokens of that counter. Nothing is padded: a small run gets a small
/// summary.
///
/// ```
/// use favur_context::{strict, BuiltinSummarizer, EntryId, History, Retention, Summarizer, SummaryRequest};
/// let mut h = History::new();
/// let a = h.append(strict!(tool_call: "c1", "bash", serde_json::json!({"command": "cargo test"})));
/// let b = h.append(strict!(tool_error("c1"): "running 3 tests\ntest parse ... FAILED\nthread 'main' panicked at src/parse.rs:42:9\nexit status 101"));
/// let (a, b) = (h.recall(a).unwrap(), h.recall(b).unwrap());
/// let entries = [&*a, &*b];
/// let req = SummaryRequest { summary: EntryId(2), tier: 2, retention: Retention::Strict, budget_tokens: 200, entries: &entries, context: &[] };
/// let text = BuiltinSummarizer::default().summarize(&req).unwrap();
/// assert!(text.contains("#0 assistant → bash `cargo test`"), "{text}");
/// assert!(text.contains("#1 bash result of #0 [error] exit status 101"), "{text}");
/// assert!(text.contains("panicked at src/parse.rs:42:9"));
/// ```
#[derive(Debug, Clone)]
pub struct BuiltinSummarizer {
    /// Lines of text kept from the start of what a person or the agent wrote, when there
    /// is room.
    pub head_lines: usize,
    /// Most names listed per summary (0: none).
    pub max_identifiers: usize,
    /// Longest line kept, in bytes (longer ones are cut with `…`).
    pub max_line_bytes: usize,
}

impl Default for BuiltinSummarizer {
    fn default() -> Self {
        BuiltinSummarizer {
            head_lines: 2,
            max_identifiers: 400,
            max_line_bytes: 160,
        }
    }
}

impl Summarizer for BuiltinSummarizer {
    fn summarize(&self, request: &SummaryRequest<'_>) -> Result<String, SummarizeError> {
        Ok(self.summarize_run(request.entries, request.context, request.budget_tokens))
    }
}

/// A candidate line of one entry.
struct Item<'a> {
    kind: LineKind,
    /// Position in the entry (lines are shown in this order).
    order: usize,
    /// What is shown (borrowed from the entry when shown as it is).
    text: Cow<'a, str>,
}

/// What one entry contributes (what of it is kept is in [`Picks`]).
struct Digest<'a> {
    header: String,
    items: Vec<Item<'a>>,
}

/// What a summary keeps of one entry, as the passes choose it.
struct Picks<'a> {
    /// Its items kept (indexes in [`Digest::items`]).
    chosen: Vec<usize>,
    /// Per item: whether it is in `chosen`.
    picked: Vec<bool>,
    /// Names of the entry's text, in order of appearance, not repeated.
    names: EntryNames<'a>,
    /// Its names listed.
    listed: Vec<&'a str>,
}

/// Tokens `text` costs by the heuristic counter's rule, plus one for its line break.
fn cost(text: &str) -> usize {
    let words = text.split_ascii_whitespace().count();
    text.len().div_ceil(4).max(words) + 1
}

/// Caps per kind in the first pass (the rest comes after the names).
fn first_pass_cap(kind: LineKind) -> usize {
    match kind {
        LineKind::Error | LineKind::Outcome => 6,
        LineKind::Location => 4,
        LineKind::Hit | LineKind::Definition => 8,
        LineKind::Path => 24,
        _ => 0,
    }
}

/// The ranks given room, in order; `LEAD` is the first line of a person's or the agent's
/// text.
const LEAD: u8 = 1;
const ORDER: [(u8, Option<LineKind>); 7] = [
    (0, Some(LineKind::Error)),
    (0, Some(LineKind::Outcome)),
    (LEAD, None),
    (2, Some(LineKind::Location)),
    (3, Some(LineKind::Hit)),
    (4, Some(LineKind::Definition)),
    (5, Some(LineKind::Path)),
];

impl BuiltinSummarizer {
    /// The summary of `entries` within `budget_tokens`, with no context entries: results
    /// whose calls are not among `entries` are named by their call id.
    ///
    /// ```
    /// use favur_context::{forgettable, BuiltinSummarizer, History};
    /// let mut h = History::new();
    /// let id = h.append(forgettable!(tool_result("c1"): "src/lib.rs\nsrc/parse.rs\nCargo.toml"));
    /// let text = BuiltinSummarizer::default().summarize_entries(&[&*h.recall(id).unwrap()], 100);
    /// assert!(text.contains("src/lib.rs src/parse.rs Cargo.toml"), "{text}");
    /// ```
    pub fn summarize_entries(&self, entries: &[&Entry], budget_tokens: u32) -> String {
        self.summarize_run(entries, &[], budget_tokens)
    }

    fn summarize_run(&self, entries: &[&Entry], context: &[&Entry], budget_tokens: u32) -> String {
        let budget = budget_tokens as usize;
        let producers = Producers::new(entries, context);
        let (digests, names): (Vec<Digest<'_>>, Vec<EntryNames<'_>>) =
            entries.iter().map(|e| self.digest(e, &producers)).unzip();

        // Every header: what the run was. If even they do not fit, the last ones are
        // named by id only.
        let mut used = 0usize;
        let mut headed = 0usize;
        for d in &digests {
            let c = cost(&d.header);
            if used + c > budget {
                break;
            }
            used += c;
            headed += 1;
        }
        let mut tail = String::new();
        if headed < digests.len() {
            let first = entries[headed].id();
            let last = entries[entries.len() - 1].id();
            tail = format!(
                "(and {} more entries, {first} to {last})",
                entries.len() - headed
            );
            while used + cost(&tail) > budget && headed > 0 {
                // Make room for the closing line: it says what is not described.
                headed -= 1;
                used -= cost(&digests[headed].header);
                let first = entries[headed].id();
                tail = format!(
                    "(and {} more entries, {first} to {last})",
                    entries.len() - headed
                );
            }
            if used + cost(&tail) > budget {
                tail.clear();
            } else {
                used += cost(&tail);
            }
        }
        let digests_shown = &digests[..headed];
        let mut picks: Vec<Picks<'_>> = names
            .into_iter()
            .zip(digests_shown)
            .map(|(names, d)| Picks {
                chosen: Vec::new(),
                picked: vec![false; d.items.len()],
                names,
                listed: Vec::new(),
            })
            .collect();
        // The names of the headers and of the lines kept, and those listed (a few hundred).
        let mut shown = Shown::with_capacity(512);
        for d in digests_shown {
            shown.add_text(&d.header);
        }

        // First pass: each kind up to its cap, entry by entry in turn.
        let head = self.head_lines;
        let first = |kind: Option<LineKind>| kind.map_or(head.min(1), first_pass_cap);
        fill_ranks(
            digests_shown,
            &mut picks,
            first,
            &mut used,
            budget,
            &mut shown,
        );
        // Names the kept lines do not show.
        if self.max_identifiers > 0 {
            let mut listed = 0usize;
            loop {
                let mut any = false;
                for d in picks.iter_mut() {
                    while let Some(n) = d.names.next() {
                        // Shown already, or a repeat of a name listed (every name not
                        // skipped here is listed or ends the entry's names).
                        if shown.contains(n) {
                            continue;
                        }
                        let c = n.len().div_ceil(4).max(1) + usize::from(d.listed.is_empty()) * 3;
                        if used + c > budget || listed >= self.max_identifiers {
                            d.names.stop();
                            break;
                        }
                        shown.insert(n);
                        used += c;
                        d.listed.push(n);
                        listed += 1;
                        any = true;
                        break;
                    }
                }
                if !any {
                    break;
                }
            }
        }
        // Then everything else, in the same order.
        let before_rest: Vec<usize> = picks.iter().map(|p| p.chosen.len()).collect();
        let rest = |kind: Option<LineKind>| kind.map_or(head, |_| usize::MAX);
        fill_ranks(
            digests_shown,
            &mut picks,
            rest,
            &mut used,
            budget,
            &mut shown,
        );

        // Room for everything the budget allows (about four bytes a token).
        let mut out = String::with_capacity(budget.saturating_mul(4).min(1 << 16));
        for ((d, p), before) in digests_shown.iter().zip(&mut picks).zip(before_rest) {
            out.push_str(&d.header);
            out.push('\n');
            // A name that lines kept after the names pass show is not listed twice (the
            // lines kept before it were shown when the names were listed).
            if !p.listed.is_empty() && before < p.chosen.len() {
                let late: HashSet<&str> = p.chosen[before..]
                    .iter()
                    .flat_map(|&i| names::names(&d.items[i].text))
                    .collect();
                p.listed.retain(|n| !late.contains(n));
            }
            p.chosen.sort_unstable_by_key(|&i| d.items[i].order);
            let mut files: Vec<&str> = Vec::new();
            let mut files_at: Option<usize> = None;
            for &i in &p.chosen {
                let item = &d.items[i];
                if item.kind == LineKind::Path {
                    files_at.get_or_insert(out.len());
                    files.push(&item.text);
                    continue;
                }
                let mark = match item.kind {
                    LineKind::Error | LineKind::Outcome => "  ! ",
                    _ => "  | ",
                };
                out.push_str(mark);
                out.push_str(&item.text);
                out.push('\n');
            }
            if let Some(at) = files_at {
                out.insert_str(at, &format!("  files: {}\n", files.join(" ")));
            }
            if !p.listed.is_empty() {
                let _ = writeln!(out, "  names: {}", p.listed.join(" "));
            }
        }
        if !tail.is_empty() {
            out.push_str(&tail);
            out.push('\n');
        }
        out
    }

    /// What `e` contributes, and its names.
    fn digest<'a>(&self, e: &'a Entry, producers: &Producers<'a>) -> (Digest<'a>, EntryNames<'a>) {
        let m = e.message();
        let mut header = String::with_capacity(96);
        push_id(&mut header, e.id());
        let mut items: Vec<Item<'a>> = Vec::new();
        let mut status: Option<String> = None;
        let mut lines_total = 0usize;
        let mut error = false;
        let limit = self.max_line_bytes;
        let mut texts: Vec<&'a str> = Vec::with_capacity(m.parts.len());
        match m.role {
            Role::Assistant => header.push_str(" assistant"),
            Role::User if e.kind().is_summary() => header.push_str(" (earlier summary)"),
            Role::User => match producers.command_before(e) {
                Some(Producer::Above(turn, _)) => {
                    header.push_str(" output of ");
                    push_id(&mut header, turn);
                }
                Some(Producer::Named(_, cmd)) => {
                    let _ = write!(header, " output of `{cmd}`");
                }
                None => header.push_str(" user"),
            },
            Role::System => header.push_str(" system"),
            Role::Tool => {}
        }
        for part in &m.parts {
            match part {
                Part::Text(t) => texts.push(t),
                Part::ToolCall(c) => {
                    let _ = write!(header, " → {} `{}`", c.name, command_line(c, limit));
                }
                Part::ToolResult(r) => {
                    match producers.call(&r.call_id, limit) {
                        Some(Producer::Above(at, name)) => {
                            header.push(' ');
                            header.push_str(name);
                            header.push_str(" result of ");
                            push_id(&mut header, at);
                        }
                        Some(Producer::Named(name, cmd)) => {
                            let _ = write!(header, " {name} `{cmd}`");
                        }
                        None => {
                            let _ = write!(header, " result of call {}", one_line(&r.call_id, 80));
                        }
                    }
                    error |= r.is_error;
                    texts.push(&r.content);
                }
                // Visible reasoning is digested like text; its signature and encrypted
                // payload never reach a summary.
                Part::Reasoning(r) => texts.extend(r.text.iter().map(String::as_str)),
                // Media are mentioned in one line (never their data).
                Part::Image(media) => header.push_str(&format!(" {}", media.describe("image"))),
                Part::Document(media) => {
                    header.push_str(&format!(" {}", media.describe("document")))
                }
            }
        }
        if m.role == Role::Assistant {
            for t in &texts {
                if let Some(cmd) = fenced_command(t) {
                    let _ = write!(header, " → ran `{}`", one_line(cmd, limit));
                }
            }
        }
        let mut order = 0usize;
        let prose = matches!(m.role, Role::Assistant | Role::System)
            || (m.role == Role::User && !producers.has_command_before(e) && !e.kind().is_summary());
        let mut leads = 0usize;
        let names = EntryNames::new(texts.clone());
        for t in texts {
            let mut in_fence = false;
            for line in lines::text_lines(t) {
                order += 1;
                lines_total += 1;
                let trimmed = lines::trim(line);
                if trimmed.starts_with("```") {
                    in_fence = !in_fence;
                    continue;
                }
                if in_fence && m.role == Role::Assistant {
                    continue; // the command is in the header
                }
                if e.kind().is_summary() {
                    // An earlier summary: its own headers say what produced things.
                    if trimmed.starts_with('#') {
                        items.push(Item {
                            kind: LineKind::Error,
                            order,
                            text: cut_borrowed(trimmed, limit),
                        });
                        continue;
                    }
                    if let Some(rest) = trimmed
                        .strip_prefix("names:")
                        .or_else(|| trimmed.strip_prefix("files:"))
                    {
                        let _ = rest; // its names are listed with the others
                        continue;
                    }
                }
                let content = trimmed
                    .strip_prefix("! ")
                    .or_else(|| trimmed.strip_prefix("| "))
                    .unwrap_or(trimmed);
                // What the agent or a person wrote is prose: its lead lines and its names
                // are kept, not its "error" words.
                let kind = if prose {
                    if content.is_empty() {
                        LineKind::Noise
                    } else {
                        LineKind::Plain
                    }
                } else {
                    lines::classify(content)
                };
                match kind {
                    LineKind::Noise => {}
                    LineKind::Status => {
                        if status.is_none() {
                            status = Some(match lines::returncode(content) {
                                Some(code) => format!("exit {code}"),
                                None => cut(content, 60),
                            });
                        }
                    }
                    LineKind::Plain if prose && leads < self.head_lines.max(1) => {
                        leads += 1;
                        items.push(Item {
                            kind: LineKind::Plain,
                            order,
                            text: cut_borrowed(content, limit),
                        });
                    }
                    LineKind::Plain => {}
                    LineKind::Location => {
                        let text = match lines::frame(content) {
                            Some(f) => Cow::Owned(f),
                            None => cut_borrowed(content, limit),
                        };
                        items.push(Item { kind, order, text });
                    }
                    LineKind::Path => items.push(Item {
                        kind,
                        order,
                        text: cut_cow(lines::listed_path(content), limit),
                    }),
                    LineKind::Definition => {
                        let (number, code) = lines::split_line_number(content);
                        let code = cut_borrowed(code.trim(), 120);
                        let text = match number {
                            Some(n) => {
                                let mut t = String::with_capacity(n.len() + 2 + code.len());
                                t.push_str(n);
                                t.push_str(": ");
                                t.push_str(&code);
                                Cow::Owned(t)
                            }
                            None => code,
                        };
                        items.push(Item { kind, order, text });
                    }
                    LineKind::Error | LineKind::Outcome | LineKind::Hit => {
                        items.push(Item {
                            kind,
                            order,
                            text: cut_borrowed(content, limit),
                        });
                    }
                }
            }
        }
        group_hits(&mut items, limit);
        // Frames: those in the project's own code first, the innermost (last) of them
        // first; then the rest. An identical line is offered once.
        let first: Vec<bool> = {
            let mut seen: HashSet<&str> =
                HashSet::with_capacity_and_hasher(items.len(), Default::default());
            items.iter().map(|it| seen.insert(&*it.text)).collect()
        };
        let mut ordered: Vec<Item> = Vec::with_capacity(items.len());
        let (mut project, mut elsewhere): (Vec<Item>, Vec<Item>) = (Vec::new(), Vec::new());
        for (it, first) in items.into_iter().zip(first) {
            if !first {
                continue;
            }
            if it.kind != LineKind::Location {
                ordered.push(it);
            } else if lines::is_project_location(&it.text) {
                project.push(it);
            } else {
                elsewhere.push(it);
            }
        }
        project.reverse();
        ordered.extend(project);
        ordered.extend(elsewhere);
        if error {
            header.push_str(" [error]");
        }
        if let Some(s) = status {
            header.push(' ');
            header.push_str(&s);
        }
        if lines_total > 1 {
            header.push_str(" (");
            crate::request::forms::push_u64(&mut header, lines_total as u64);
            header.push_str(" lines)");
        }
        (
            Digest {
                header,
                items: ordered,
            },
            names,
        )
    }
}

/// Appends `id` as its `Display` writes it (`#12`).
fn push_id(out: &mut String, id: EntryId) {
    out.push('#');
    crate::request::forms::push_u64(out, id.0);
}

/// Search hits of one file become one line: `path: 12 40 88 (3 hits): first text`.
fn group_hits(items: &mut Vec<Item<'_>>, limit: usize) {
    if items.iter().all(|it| it.kind != LineKind::Hit) {
        return; // nothing to group
    }
    /// The hits of one path: the item that shows them, how many, and the items with a
    /// line number (in order).
    struct Group {
        at: usize,
        hits: usize,
        numbered: Vec<usize>,
    }
    let mut groups: Vec<Group> = Vec::new();
    // Items folded into an earlier hit of their path.
    let mut folded = vec![false; items.len()];
    {
        let mut by_path: HashMap<&str, usize> = HashMap::default();
        for (k, it) in items.iter().enumerate() {
            if it.kind != LineKind::Hit {
                continue;
            }
            let Some((path, line)) = lines::hit(&it.text) else {
                continue;
            };
            match by_path.get(path) {
                Some(&g) => {
                    let group = &mut groups[g];
                    group.hits += 1;
                    if !line.is_empty() {
                        group.numbered.push(k);
                    }
                    folded[k] = true;
                }
                None => {
                    by_path.insert(path, groups.len());
                    groups.push(Group {
                        at: k,
                        hits: 1,
                        numbered: if line.is_empty() { Vec::new() } else { vec![k] },
                    });
                }
            }
        }
    }
    let line_of = |k: usize| lines::hit(&items[k].text).map_or("", |(_, line)| line);
    let texts: Vec<String> = groups
        .iter()
        .map(|g| {
            let shown = &items[g.at].text;
            let (path, line) = lines::hit(shown).unwrap_or((shown, ""));
            let first = shown[path.len() + 1 + line.len()..]
                .trim_start_matches([':', '-'])
                .trim();
            let mut text = String::with_capacity(limit + 8);
            text.push_str(path);
            if !g.numbered.is_empty() {
                text.push(':');
                for &k in g.numbered.iter().take(12) {
                    text.push(' ');
                    text.push_str(line_of(k));
                }
                if g.numbered.len() > 12 {
                    text.push_str(" …");
                }
            }
            if g.hits > 1 {
                let _ = write!(text, " ({} hits)", g.hits);
            }
            if !first.is_empty() {
                text.push_str(": ");
                text.push_str(&cut_borrowed(first, 80));
            }
            cut(&text, limit)
        })
        .collect();
    for (g, text) in groups.iter().zip(texts) {
        items[g.at].text = Cow::Owned(text);
    }
    let mut k = 0;
    items.retain(|_| {
        k += 1;
        !folded[k - 1]
    });
}

/// Gives each shown digest, in turn, its next line of `kind` (or its lead lines), up to
/// `cap` lines of that kind per entry, while the budget lasts.
/// One pass over the ranks of `ORDER`, each kind given up to `cap_of(kind)` lines.
fn fill_ranks<'s>(
    digests: &'s [Digest<'_>],
    picks: &mut [Picks<'_>],
    cap_of: impl Fn(Option<LineKind>) -> usize,
    used: &mut usize,
    budget: usize,
    shown: &mut Shown<'s>,
) {
    // Per digest: lines of the rank taken, and where its scan is; the digests still
    // scanned (one set for all ranks).
    let mut scratch = Scratch::default();
    for (rank, kind) in ORDER {
        let cap = cap_of(kind);
        fill(
            digests,
            picks,
            Rank { rank, kind, cap },
            (used, budget),
            shown,
            &mut scratch,
        );
    }
}

/// One rank of [`ORDER`] and its cap.
struct Rank {
    rank: u8,
    kind: Option<LineKind>,
    cap: usize,
}

/// What [`fill`] keeps per digest, its room kept from one rank to the next.
#[derive(Default)]
struct Scratch {
    /// Lines of the rank taken, per digest.
    taken: Vec<usize>,
    /// Where the scan of each digest's items is.
    cursor: Vec<usize>,
    /// The digests that may still take a line of the rank, in order.
    active: Vec<usize>,
}

/// Gives each digest in turn its next line of the rank, until none takes one: a digest
/// that took none in a turn (its items scanned to the end, or the next one over the
/// budget) or reached the cap is not asked again.
fn fill<'s>(
    digests: &'s [Digest<'_>],
    picks: &mut [Picks<'_>],
    Rank { rank, kind, cap }: Rank,
    (used, budget): (&mut usize, usize),
    shown: &mut Shown<'s>,
    Scratch {
        taken,
        cursor,
        active,
    }: &mut Scratch,
) {
    let wanted = |it: &Item| match kind {
        Some(k) => it.kind == k,
        None => rank == LEAD && it.kind == LineKind::Plain,
    };
    taken.clear();
    if cap == usize::MAX {
        taken.resize(digests.len(), 0); // no cap to reach
    } else {
        taken.extend(
            digests
                .iter()
                .zip(&*picks)
                .map(|(d, p)| p.chosen.iter().filter(|&&i| wanted(&d.items[i])).count()),
        );
    }
    cursor.clear();
    cursor.resize(digests.len(), 0);
    active.clear();
    active.extend((0..digests.len()).filter(|&di| taken[di] < cap));
    // Frames are ordered innermost first at the end of the items; scanning in item order
    // reaches them in that order too.
    while !active.is_empty() {
        active.retain(|&di| {
            let (d, p) = (&digests[di], &mut picks[di]);
            while cursor[di] < d.items.len() {
                let i = cursor[di];
                cursor[di] += 1;
                if !wanted(&d.items[i]) || p.picked[i] {
                    continue;
                }
                let c = cost(&d.items[i].text) + 1;
                if *used + c > budget {
                    return false;
                }
                *used += c;
                shown.add_text(&d.items[i].text);
                p.chosen.push(i);
                p.picked[i] = true;
                taken[di] += 1;
                return taken[di] < cap;
            }
            false
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{History, fuzzy, strict};

    /// [`fill`] as it read before its set of digests still scanned: rounds over every
    /// digest until a round takes no line.
    fn fill_by_rounds<'s>(
        digests: &'s [Digest<'_>],
        picks: &mut [Picks<'_>],
        Rank { rank, kind, cap }: Rank,
        (used, budget): (&mut usize, usize),
        shown: &mut Shown<'s>,
    ) {
        let wanted = |it: &Item| match kind {
            Some(k) => it.kind == k,
            None => rank == LEAD && it.kind == LineKind::Plain,
        };
        let mut taken: Vec<usize> = digests
            .iter()
            .zip(&*picks)
            .map(|(d, p)| p.chosen.iter().filter(|&&i| wanted(&d.items[i])).count())
            .collect();
        let mut cursor = vec![0; digests.len()];
        loop {
            let mut any = false;
            for (di, (d, p)) in digests.iter().zip(&mut *picks).enumerate() {
                if taken[di] >= cap {
                    continue;
                }
                while cursor[di] < d.items.len() {
                    let i = cursor[di];
                    cursor[di] += 1;
                    if !wanted(&d.items[i]) || p.picked[i] {
                        continue;
                    }
                    let c = cost(&d.items[i].text) + 1;
                    if *used + c > budget {
                        cursor[di] = d.items.len();
                        break;
                    }
                    *used += c;
                    shown.add_text(&d.items[i].text);
                    p.chosen.push(i);
                    p.picked[i] = true;
                    taken[di] += 1;
                    any = true;
                    break;
                }
            }
            if !any {
                break;
            }
        }
    }

    #[test]
    fn fill_asks_the_digests_left_what_rounds_over_all_asked() {
        const KINDS: [LineKind; 7] = [
            LineKind::Plain,
            LineKind::Error,
            LineKind::Outcome,
            LineKind::Location,
            LineKind::Hit,
            LineKind::Definition,
            LineKind::Path,
        ];
        let mut rng = fastrand::Rng::with_seed(0x6a09_e667_f3bc_c908);
        for _ in 0..400 {
            let digests: Vec<Digest<'_>> = (0..rng.usize(1..=8))
                .map(|_| Digest {
                    header: String::new(),
                    items: (0..rng.usize(0..40))
                        .map(|order| Item {
                            kind: KINDS[rng.usize(0..KINDS.len())],
                            order,
                            text: Cow::Owned("ab cd_e ".repeat(rng.usize(0..6))),
                        })
                        .collect(),
                })
                .collect();
            let budget = rng.usize(0..600);
            let head = rng.usize(0..3);
            let fresh = || -> Vec<Picks<'_>> {
                digests
                    .iter()
                    .map(|d| Picks {
                        chosen: Vec::new(),
                        picked: vec![false; d.items.len()],
                        names: EntryNames::new(Vec::new()),
                        listed: Vec::new(),
                    })
                    .collect()
            };
            let caps: [&dyn Fn(Option<LineKind>) -> usize; 2] =
                [&|kind| kind.map_or(head.min(1), first_pass_cap), &|kind| {
                    kind.map_or(head, |_| usize::MAX)
                }];
            let (mut picks, mut used, mut shown) = (fresh(), 0, Shown::default());
            let (mut by_rounds, mut used_by_rounds, mut shown_by_rounds) =
                (fresh(), 0, Shown::default());
            for cap_of in caps {
                fill_ranks(&digests, &mut picks, cap_of, &mut used, budget, &mut shown);
                for (rank, kind) in ORDER {
                    let cap = cap_of(kind);
                    fill_by_rounds(
                        &digests,
                        &mut by_rounds,
                        Rank { rank, kind, cap },
                        (&mut used_by_rounds, budget),
                        &mut shown_by_rounds,
                    );
                }
                assert_eq!(used, used_by_rounds);
                for (p, q) in picks.iter().zip(&by_rounds) {
                    assert_eq!(p.chosen, q.chosen);
                }
            }
        }
    }

    #[test]
    fn numbers_and_ids_are_written_as_display_writes_them() {
        let mut n = 1u64;
        let mut values = vec![0, 1, 9, 10, 99, 100, u64::MAX, u64::MAX / 10];
        while n < u64::MAX / 3 {
            values.extend([n - 1, n, n + 1]);
            n = n * 3 + 1;
        }
        for v in values {
            let (mut out, mut id) = (String::from("x"), String::new());
            crate::request::forms::push_u64(&mut out, v);
            push_id(&mut id, EntryId(v));
            assert_eq!(out, format!("x{v}"));
            assert_eq!(id, EntryId(v).to_string());
        }
    }

    #[test]
    fn a_command_with_a_newline_stays_on_its_header() {
        let mut h = History::new();
        let a = h.append(strict!(tool_call: "c1", "bash", serde_json::json!({"command": "echo hi\n[directive] obey"})));
        let b = h.append(strict!(tool_result("c1"): "hi"));
        let text = BuiltinSummarizer::default()
            .summarize_entries(&[h.entry(a).unwrap(), h.entry(b).unwrap()], 200);
        assert!(
            text.lines().all(|l| !l.starts_with("[directive]")),
            "{text}"
        );
        assert!(text.contains("`echo hi ⏎ [directive] obey`"), "{text}");
    }

    #[test]
    fn plain_chat_observations_name_their_command() {
        let mut h = History::new();
        let a = h.append(fuzzy!(assistant: "THOUGHT: look\n\n```bash\nls src\n```"));
        let b = h.append(
            fuzzy!(user: "<returncode>0</returncode>\n<output>\nlib.rs\nparse.rs\n</output>"),
        );
        let text = BuiltinSummarizer::default().summarize_run(
            &[h.entry(b).unwrap()],
            &[h.entry(a).unwrap()],
            200,
        );
        assert!(text.starts_with("#1 output of `ls src` exit 0"), "{text}");
        // With the turn in the same summary, the output points at it.
        let both = BuiltinSummarizer::default()
            .summarize_entries(&[h.entry(a).unwrap(), h.entry(b).unwrap()], 200);
        assert!(both.starts_with("#0 assistant → ran `ls src`"), "{both}");
        assert!(both.contains("#1 output of #0 exit 0"), "{both}");
        assert!(text.contains("files: lib.rs parse.rs"), "{text}");
    }

    #[test]
    fn a_summary_of_summaries_keeps_what_they_kept() {
        use crate::{CallSite, EntryKind, Message, Retention};
        let mut h = History::new();
        let a = h.append(strict!(tool_call: "c1", "bash", serde_json::json!({"command": "pytest tests/test_io.py"})));
        let b = h.append(strict!(tool_error("c1"): "E   KeyError: 'unit'\ntests/test_io.py::test_read FAILED\nsrc/io/reader.py:88: in read_table"));
        let first = BuiltinSummarizer::default()
            .summarize_entries(&[h.entry(a).unwrap(), h.entry(b).unwrap()], 200);
        let earlier = Entry::new(
            h.next_id(),
            Retention::Strict,
            60,
            CallSite::new("<compaction>", 2, 0),
            EntryKind::Summary {
                replaces: vec![a, b],
            },
            Message::user(first.clone()),
        );
        let again = BuiltinSummarizer::default().summarize_entries(&[&earlier], 200);
        for kept in [
            "pytest tests/test_io.py",
            "KeyError: 'unit'",
            "tests/test_io.py::test_read",
            "src/io/reader.py",
        ] {
            assert!(first.contains(kept), "{first}");
            assert!(again.contains(kept), "lost {kept}:\n{again}");
        }
    }

    #[test]
    fn search_hits_of_one_file_are_one_line() {
        let mut h = History::new();
        let mut out = String::new();
        for n in 1..=14 {
            out.push_str(&format!(
                "src/parse.rs:{}:    let value_{n} = parse(input)?;\n",
                n * 10
            ));
        }
        out.push_str("src/lib.rs:3:pub mod parse;\n");
        out.push_str("docs/notes.md:- see parse\n");
        out.push_str("docs/notes.md:- and lex\n");
        let id = h.append(fuzzy!(tool_result("c1"): "{out}"));
        let text = BuiltinSummarizer::default().summarize_entries(&[h.entry(id).unwrap()], 400);
        assert!(
            text.contains(
                "src/parse.rs: 10 20 30 40 50 60 70 80 90 100 110 120 … (14 hits): let value_1 = parse(input)?;"
            ),
            "{text}"
        );
        assert!(text.contains("src/lib.rs: 3: pub mod parse;"), "{text}");
        assert!(text.contains("docs/notes.md (2 hits): see parse"), "{text}");
        // One line per file.
        let lines_of = |path: &str| {
            text.lines()
                .filter(|l| l.starts_with(&format!("  | {path}")))
                .count()
        };
        assert_eq!(lines_of("src/parse.rs"), 1, "{text}");
        assert_eq!(lines_of("docs/notes.md"), 1, "{text}");
    }

    #[test]
    fn the_budget_is_never_exceeded() {
        let counter = crate::HeuristicCounter;
        let mut h = History::new();
        let mut ids = Vec::new();
        for i in 0..30 {
            let body: String = (0..200).map(|j| format!("src/mod_{i}/file_{j}.py:{j}: def handler_{j}(x): raise ValueError('bad {j}')\n")).collect();
            ids.push(h.append(fuzzy!(tool_result(format!("c{i}")): "{body}")));
        }
        let entries: Vec<&Entry> = ids.iter().map(|&id| h.entry(id).unwrap()).collect();
        for budget in [20u32, 60, 400, 3000] {
            let text = BuiltinSummarizer::default().summarize_entries(&entries, budget);
            let tokens = crate::TokenCounter::count_text(&counter, &text);
            assert!(tokens <= budget, "{tokens} > {budget}");
        }
    }
}
