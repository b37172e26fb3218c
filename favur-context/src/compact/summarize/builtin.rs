//! The built-in summarizer: deterministic, no model, no network.

use super::acted::{Typed, TypedLog};
use super::budget::{self, Cap, FIRST_PASS_ACTED, Picks, cost, first_pass_cap};
use super::entry::{self, Digest, Reading};
use super::item::Item;
use super::line_kind::LineKind;
use super::names::{EntryNames, Shown};
use super::numbers::is_kept_verbatim;
use super::producers::Producers;
use super::{SummarizeError, Summarizer, SummaryRequest};
use crate::model::entry::Entry;

/// The built-in summarizer: deterministic, no model, no network.
///
/// A summary says, for every entry it replaces, **what produced it** (the tool and its
/// command or arguments; for a plain-chat observation, the command of the turn before it),
/// its exit status and size. Then, as the budget allows, it keeps what the agent refers
/// back to, in this order, giving each entry its turn so that one long entry cannot take
/// the room of the others:
///
/// 1. **the lines the agent acted on since**, verbatim with their line numbers
///    (`606|             pk_key = ...`): the identifiers, quoted strings and lines of code
///    the agent typed after the entry was observed (in the run's later assistant turns
///    and in [`SummaryRequest::later`]: their text and tool-call arguments) point at the
///    lines that hold them; the most recently acted on first, each with the definition
///    that encloses it; where such lines (or a line and its definition) lie at most
///    16 lines apart in one definition, the lines between them too, verbatim with their
///    numbers, carried to the end of the block when that is at most 3 lines on (a **hot
///    region**: a model can copy a contiguous region into an edit, not scattered lines).
///    Those come after every line acted on, at most 40 lines a region and half the
///    budget an entry;
/// 2. error lines (errors, exceptions, panics, tracebacks), failing tests and test totals;
/// 3. the first line of what the agent or a person wrote (its decision or request), and
///    of a short output (at most 8 lines that say something: a script's printed result,
///    a one-line check), the next lines of both too (up to [`head_lines`](Self::head_lines)) in
///    the second pass;
/// 4. locations: traceback frames as `file:line in function` (the innermost of a Python
///    traceback with the source line it failed on: `src/conf.py:30 in load: raise ...`),
///    search hits as `file:line` (a search of one file, `grep -n`, keeps the lines it
///    matched verbatim with their numbers);
/// 5. definitions seen in a file view, verbatim with their line numbers
///    (`120|     def parse(self, x):`), the outermost first (a file's classes and
///    functions before the methods of its first class), each with its doc line when
///    there is room; and a diff's outline (its `diff --git`, `--- a/`, `+++ b/` and `@@`
///    lines: what a patch written from it starts with);
/// 6. listed paths (a directory listing or `find` output keeps its paths, without the
///    `ls -l` columns);
/// 7. what is left of the above;
///
/// and it ends saying how to get the rest back (recall an entry by its id, or rerun its
/// command). A list of bare names is written only if asked for
/// ([`max_identifiers`](Self::max_identifiers)): a model cannot copy a line out of it.
///
/// A run that merged earlier summaries keeps what they kept: their lines are read like
/// any other text, their headers and the lines they kept verbatim first.
///
/// The budget is read with the [`HeuristicCounter`](crate::tokens::HeuristicCounter)'s rule (about
/// four bytes a token, at least one token a word), so the text never needs more than
/// `budget_tokens` tokens of that counter. Nothing is padded: a small run gets a small
/// summary.
///
/// ```
/// use favur_context::compact::{BuiltinSummarizer, Summarizer, SummaryRequest};
/// use favur_context::{strict, EntryId, History, Retention};
/// let mut h = History::new();
/// let a = h.append(strict!(tool_call: "c1", "bash", serde_json::json!({"command": "cat src/lib.rs"})));
/// let b = h.append(strict!(tool_result("c1"): "pub fn parse(input: &str) -> Ast {{\n    let tokens = lex(input);\n    build_tree(tokens)\n}}"));
/// let c = h.append(strict!(assistant: "`build_tree` drops the last token."));
/// let (a, b, c) = (h.recall(a).unwrap(), h.recall(b).unwrap(), h.recall(c).unwrap());
/// let (entries, later) = ([&*a, &*b], [&*c]);
/// let req = SummaryRequest { summary: EntryId(3), tier: std::num::NonZeroU8::new(2).unwrap(), retention: Retention::Strict, budget_tokens: 200, entries: &entries, context: &[], later: &later };
/// let text = BuiltinSummarizer::default().summarize(&req).unwrap();
/// assert!(text.contains("#0 assistant → bash `cat src/lib.rs`"), "{text}");
/// assert!(text.contains("#1 bash result of #0 (4 lines)"), "{text}");
/// // The line the agent talked about since, verbatim with its line number, the
/// // definition around it, and the line between them (a hot region).
/// assert!(text.contains("\n  1| pub fn parse(input: &str) -> Ast {\n  2|     let tokens = lex(input);\n  3|     build_tree(tokens)\n"), "{text}");
/// assert!(!text.contains("names:"), "{text}");
/// ```
#[derive(Debug, Clone)]
pub struct BuiltinSummarizer {
    /// Lines of text kept from the start of what a person or the agent wrote, and of a
    /// short output, when there is room.
    pub head_lines: usize,
    /// Most bare names listed per summary (`names: ...`, the names the kept lines do not
    /// show). The default 0 lists none: the room goes to lines the agent can copy.
    pub max_identifiers: usize,
    /// Longest line kept, in bytes (longer ones are cut with `…`), but lines the agent
    /// acted on, kept verbatim up to 400 bytes.
    pub max_line_bytes: usize,
}

impl Default for BuiltinSummarizer {
    fn default() -> Self {
        BuiltinSummarizer {
            head_lines: 2,
            max_identifiers: 0,
            max_line_bytes: 160,
        }
    }
}

impl Summarizer for BuiltinSummarizer {
    fn summarize(&self, request: &SummaryRequest<'_>) -> Result<String, SummarizeError> {
        let log = TypedLog::new(turns_of(request));
        Ok(self.summarize_run(request, &log))
    }

    /// Reads what the agent typed in the turns of every run once, not once per run (the
    /// runs of a compaction share most of their later turns); each summary is the one
    /// [`summarize`](Summarizer::summarize) gives alone.
    fn summarize_runs(
        &self,
        requests: &[SummaryRequest<'_>],
    ) -> Vec<Result<String, SummarizeError>> {
        let log = TypedLog::new(requests.iter().flat_map(turns_of));
        requests
            .iter()
            .map(|r| Ok(self.summarize_run(r, &log)))
            .collect()
    }
}

/// The entries a request's summary reads what the agent typed from: its run's, the
/// turns that opened them, and the turns after it.
fn turns_of<'a>(request: &SummaryRequest<'a>) -> impl Iterator<Item = &'a Entry> {
    let (entries, context, later) = (request.entries, request.context, request.later);
    entries.iter().chain(context).chain(later).copied()
}

/// The most tokens the hot regions of one entry take of a summary's `budget`.
fn region_share(budget: usize) -> usize {
    budget / 2
}

/// The last line of a summary that leaves lines out: how to get them back.
const REST: &str = "(the rest: recall #id, or rerun the command)";

impl BuiltinSummarizer {
    /// The summary of `entries` within `budget_tokens`, with no context entries and no
    /// later turns: results whose calls are not among `entries` are named by their call
    /// id, and no line counts as acted on.
    ///
    /// ```
    /// use favur_context::compact::BuiltinSummarizer;
    /// use favur_context::{forgettable, History};
    /// let mut h = History::new();
    /// let id = h.append(forgettable!(tool_result("c1"): "src/lib.rs\nsrc/parse.rs\nCargo.toml"));
    /// let text = BuiltinSummarizer::default().summarize_entries(&[&*h.recall(id).unwrap()], 100);
    /// assert!(text.contains("src/lib.rs src/parse.rs Cargo.toml"), "{text}");
    /// ```
    pub fn summarize_entries(&self, entries: &[&Entry], budget_tokens: u32) -> String {
        let log = TypedLog::new(entries.iter().copied());
        let typed = Typed::of(&log, entries.iter().map(|e| e.id().0).collect());
        self.summarize_reading(entries, &[], &typed, budget_tokens)
    }

    /// The summary of `request`'s run, reading what its turns typed from `log` (which
    /// holds at least them).
    fn summarize_run<'a>(&self, request: &SummaryRequest<'a>, log: &TypedLog<'a>) -> String {
        // What the agent typed: in the turns of the run and after it (a line is acted on
        // by a turn recorded after its entry).
        let typed = Typed::of(log, turns_of(request).map(|e| e.id().0).collect());
        self.summarize_reading(
            request.entries,
            request.context,
            &typed,
            request.budget_tokens,
        )
    }

    /// The summary of `entries` as a request with this `context` and these `later`
    /// turns gives it (for tests that build no request).
    #[cfg(test)]
    fn summarize_parts<'a>(
        &self,
        entries: &[&'a Entry],
        context: &[&'a Entry],
        later: &[&'a Entry],
        budget_tokens: u32,
    ) -> String {
        let request = SummaryRequest {
            summary: crate::EntryId(u64::MAX),
            tier: std::num::NonZeroU8::MIN,
            retention: crate::Retention::Strict,
            budget_tokens,
            entries,
            context,
            later,
        };
        let log = TypedLog::new(turns_of(&request));
        self.summarize_run(&request, &log)
    }

    fn summarize_reading<'a>(
        &self,
        entries: &[&'a Entry],
        context: &[&'a Entry],
        typed: &Typed<'_, 'a>,
        budget_tokens: u32,
    ) -> String {
        let budget = budget_tokens as usize;
        let producers = Producers::new(entries, context);
        let reading = Reading {
            producers: &producers,
            typed,
            head_lines: self.head_lines,
            limit: self.max_line_bytes,
        };
        let (digests, texts): (Vec<Digest<'_>>, Vec<Vec<&str>>) =
            entries.iter().map(|e| entry::digest(e, &reading)).unzip();
        let mut used = 0usize;
        let (headed, tail) = headers(entries, &digests, &mut used, budget);
        let shown_digests = &digests[..headed];
        // Room for the closing line, if a line may be left out.
        let rest = shown_digests.iter().any(|d| d.output_lines > 0) && used + cost(REST) <= budget;
        if rest {
            used += cost(REST);
        }
        let (mut picks, mut shown) = self.keep_lines(shown_digests, (&mut used, budget));
        budget::note_twins(shown_digests, &mut picks, (&mut used, budget));
        // Names the kept lines do not show, in the room left, if asked for.
        let texts = texts.into_iter().take(headed).collect();
        let listed = self.list_names(texts, &mut shown, (&mut used, budget));
        let omitted = shown_digests
            .iter()
            .zip(&picks)
            .any(|(d, p)| d.output_lines > p.acted.len() + p.chosen.len());
        let closing = [tail.as_str(), if rest && omitted { REST } else { "" }];
        render(budget, shown_digests, &mut picks, &listed, closing)
    }

    /// The lines kept of each digest, within the budget: the lines acted on first (up to
    /// [`FIRST_PASS_ACTED`] an entry), then each kind up to its first-pass cap, then the
    /// rest in the same order; and the names those lines and the headers show.
    fn keep_lines<'s>(
        &self,
        digests: &'s [Digest<'_>],
        (used, budget): (&mut usize, usize),
    ) -> (Vec<Picks>, Shown<'s>) {
        let mut picks: Vec<Picks> = digests.iter().map(|d| Picks::new(d.items.len())).collect();
        // The names of the headers and of the lines kept (a few hundred).
        let mut shown = Shown::with_capacity(512);
        for d in digests {
            shown.add_text(&d.header);
        }
        let acted_cap = FIRST_PASS_ACTED;
        budget::pick_acted(
            digests,
            &mut picks,
            acted_cap,
            (&mut *used, budget),
            &mut shown,
        );
        let head = self.head_lines;
        let first = |kind: Option<LineKind>| first_pass_cap(kind, head);
        budget::fill_ranks(digests, &mut picks, first, used, budget, &mut shown);
        // Then every line acted on, then the lines between those close together (hot
        // regions), then everything else in the same order.
        budget::pick_acted(
            digests,
            &mut picks,
            Cap::Unbounded,
            (&mut *used, budget),
            &mut shown,
        );
        let share = region_share(budget);
        budget::pick_regions(digests, &mut picks, share, (&mut *used, budget), &mut shown);
        let all = |kind: Option<LineKind>| kind.map_or(Cap::Lines(head), |_| Cap::Unbounded);
        budget::fill_ranks(digests, &mut picks, all, used, budget, &mut shown);
        (picks, shown)
    }

    /// The names of each entry's texts that the kept lines do not show, each listed once
    /// per summary, entry by entry in turn, up to [`max_identifiers`](Self::max_identifiers).
    fn list_names<'a>(
        &self,
        texts: Vec<Vec<&'a str>>,
        shown: &mut Shown<'a>,
        (used, budget): (&mut usize, usize),
    ) -> Vec<Vec<&'a str>> {
        let mut listed: Vec<Vec<&'a str>> = vec![Vec::new(); texts.len()];
        if self.max_identifiers == 0 {
            return listed;
        }
        let mut names: Vec<EntryNames<'a>> = texts.into_iter().map(EntryNames::new).collect();
        let mut count = 0usize;
        loop {
            let mut any = false;
            for (d, list) in names.iter_mut().zip(&mut listed) {
                while let Some(n) = d.next() {
                    // Shown already, or a repeat of a name listed.
                    if shown.contains(n) {
                        continue;
                    }
                    let c = n.len().div_ceil(4).max(1) + usize::from(list.is_empty()) * 3;
                    if *used + c > budget || count >= self.max_identifiers {
                        d.stop();
                        break;
                    }
                    shown.insert(n);
                    *used += c;
                    list.push(n);
                    count += 1;
                    any = true;
                    break;
                }
            }
            if !any {
                return listed;
            }
        }
    }
}

/// Counts every header that fits (what the run was); if even they do not, the last
/// ones are named by id only, in a closing line. The number of headers shown and that
/// line.
fn headers(
    entries: &[&Entry],
    digests: &[Digest<'_>],
    used: &mut usize,
    budget: usize,
) -> (usize, String) {
    let mut headed = 0usize;
    for d in digests {
        let c = cost(&d.header);
        if *used + c > budget {
            break;
        }
        *used += c;
        headed += 1;
    }
    let (Some(first), Some(last)) = (entries.get(headed), entries.last()) else {
        return (headed, String::new()); // every header shown
    };
    let mut first = first.id();
    let last = last.id();
    let line = |headed: usize, first| {
        format!(
            "(and {} more entries, {first} to {last})",
            entries.len() - headed
        )
    };
    let mut tail = line(headed, first);
    while *used + cost(&tail) > budget && headed > 0 {
        // Make room for the closing line: it says what is not described.
        headed -= 1;
        *used -= cost(&digests[headed].header);
        first = entries[headed].id();
        tail = line(headed, first);
    }
    if *used + cost(&tail) > budget {
        tail.clear();
    } else {
        *used += cost(&tail);
    }
    (headed, tail)
}

/// The summary text: each entry's header, the lines acted on (with their context), the
/// other lines kept in order (a listing's paths on one `files:` line), its names if
/// listed; then the closing lines.
fn render(
    budget: usize,
    digests: &[Digest<'_>],
    picks: &mut [Picks],
    listed: &[Vec<&str>],
    closing: [&str; 2],
) -> String {
    // Room for everything the budget allows (about four bytes a token).
    let mut out = String::with_capacity(budget.saturating_mul(4).min(1 << 16));
    for ((d, p), names) in digests.iter().zip(picks).zip(listed) {
        out.push_str(&d.header);
        out.push('\n');
        p.acted.sort_unstable_by_key(|&i| d.items[i].order);
        p.chosen.sort_unstable_by_key(|&i| d.items[i].order);
        for &i in &p.acted {
            push_line(&mut out, &d.items[i]);
        }
        let mut files: Vec<&str> = Vec::new();
        let mut files_at: Option<usize> = None;
        for &i in &p.chosen {
            let item = &d.items[i];
            if item.kind == LineKind::Path && item.acted.is_none() {
                files_at.get_or_insert(out.len());
                files.push(&item.text);
                continue;
            }
            push_line(&mut out, item);
        }
        if let Some(at) = files_at {
            out.insert_str(at, &format!("  files: {}\n", files.join(" ")));
        }
        if !names.is_empty() {
            out.push_str("  names: ");
            out.push_str(&names.join(" "));
            out.push('\n');
        }
        if let Some(holder) = p.twin_of.and_then(|h| digests.get(h)) {
            out.push_str("  ");
            out.push_str(&budget::twin_note(&holder.header));
            out.push('\n');
        }
    }
    for line in closing.into_iter().filter(|l| !l.is_empty()) {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// One kept line, with its mark: a line kept verbatim (`601| code`, `| code`) as it is,
/// an error or outcome after `!`, any other after `|`.
fn push_line(out: &mut String, item: &Item<'_>) {
    let mark = if item.acted.is_some() || item.region || is_kept_verbatim(&item.text) {
        "  "
    } else if matches!(item.kind, LineKind::Error | LineKind::Outcome) {
        "  ! "
    } else {
        "  | "
    };
    out.push_str(mark);
    out.push_str(&item.text);
    out.push('\n');
}

#[cfg(test)]
mod tests;
