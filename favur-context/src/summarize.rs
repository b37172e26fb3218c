//! Summarizers: what turns one run of entries into the text of one summary.
//!
//! [`Summarizer`] is the synchronous trait (the built-in summarizer, or a blocking client);
//! [`AsyncSummarizer`] is its async counterpart for agent code that calls an LLM. Neither
//! needs an async runtime from this crate: the engine only awaits the futures you give it.

use std::fmt::Write as _;
use std::future::Future;

use crate::entry::{Entry, EntryId};
use crate::message::{Arguments, Part, Role};
use crate::retention::Retention;

/// What a summarizer is asked for: one summary of one contiguous run of entries.
///
/// ```
/// use favur_context::{fuzzy, EntryId, History, Retention, SummaryRequest};
/// let mut h = History::new();
/// let id = h.append(fuzzy!(user: "hello"));
/// let entry = h.recall(id).unwrap();
/// let entries = [&*entry];
/// let req = SummaryRequest { summary: EntryId(1), tier: 1, retention: Retention::Fuzzy, budget_tokens: 100, entries: &entries };
/// assert_eq!(req.entries.len(), 1);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct SummaryRequest<'a> {
    /// The id the summary entry will get.
    pub summary: EntryId,
    /// The tier that fired.
    pub tier: u8,
    /// The class the summary will carry.
    pub retention: Retention,
    /// The budget for the summary text, in tokens.
    pub budget_tokens: u32,
    /// The entries of the run, in order (originals, whatever their current form).
    pub entries: &'a [&'a Entry],
}

/// A summarizer failed (an LLM timed out, say). The engine falls back to the built-in
/// summarizer for that run and records the failure in the report.
///
/// ```
/// let e = favur_context::SummarizeError::new("model timed out after 30 s");
/// assert_eq!(e.to_string(), "model timed out after 30 s");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SummarizeError {
    message: String,
}

impl SummarizeError {
    /// An error with this message.
    ///
    /// ```
    /// assert_eq!(favur_context::SummarizeError::new("x").message(), "x");
    /// ```
    pub fn new(message: impl std::fmt::Display) -> Self {
        SummarizeError {
            message: message.to_string(),
        }
    }

    /// The message.
    ///
    /// ```
    /// assert_eq!(favur_context::SummarizeError::new("late").message(), "late");
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Writes the text of one summary, synchronously. Called once per run, never per entry.
///
/// The engine adds a header naming the ids the summary replaces, so the text need only
/// hold the gist. An empty text counts as a failure.
///
/// ```
/// use favur_context::{SummarizeError, Summarizer, SummaryRequest};
/// struct Count;
/// impl Summarizer for Count {
///     fn summarize(&self, r: &SummaryRequest<'_>) -> Result<String, SummarizeError> {
///         Ok(format!("{} entries", r.entries.len()))
///     }
/// }
/// ```
pub trait Summarizer {
    /// The summary text of `request.entries`, within about `request.budget_tokens`.
    fn summarize(&self, request: &SummaryRequest<'_>) -> Result<String, SummarizeError>;
}

/// Writes the text of one summary, asynchronously (an LLM call). Use it with
/// [`Compactor::compact_async`](crate::Compactor::compact_async) or
/// [`Compactor::prepare_async`](crate::Compactor::prepare_async); any executor works.
///
/// ```
/// use favur_context::{AsyncSummarizer, SummarizeError, SummaryRequest};
/// struct Llm;
/// impl AsyncSummarizer for Llm {
///     async fn summarize(&self, r: &SummaryRequest<'_>) -> Result<String, SummarizeError> {
///         // call your model here
///         Ok(format!("{} entries about the parser", r.entries.len()))
///     }
/// }
/// ```
///
/// The future must be `Send` (so that [`Compactor::prepare_async`](crate::Compactor::prepare_async)
/// can be spawned on a multi-threaded executor): holding an `Rc` across an await does not
/// compile.
///
/// ```compile_fail
/// use favur_context::{AsyncSummarizer, SummarizeError, SummaryRequest};
/// struct Local;
/// impl AsyncSummarizer for Local {
///     async fn summarize(&self, _: &SummaryRequest<'_>) -> Result<String, SummarizeError> {
///         let shared = std::rc::Rc::new("gist");
///         std::future::ready(()).await; // error: future cannot be sent between threads safely
///         Ok(shared.to_string())
///     }
/// }
/// ```
pub trait AsyncSummarizer {
    /// The summary text of `request.entries`, within about `request.budget_tokens`.
    ///
    /// The future is `Send`, so the compactor's futures are too (spawn them on a
    /// multi-threaded executor); an `async fn` here is, if what it holds across its
    /// awaits is.
    fn summarize(
        &self,
        request: &SummaryRequest<'_>,
    ) -> impl Future<Output = Result<String, SummarizeError>> + Send;
}

/// Makes any [`Summarizer`] usable where an [`AsyncSummarizer`] is expected (its future
/// is ready at once).
///
/// ```
/// use favur_context::{AsyncSummarizer, BuiltinSummarizer, Ready};
/// fn takes_async(_: &impl AsyncSummarizer) {}
/// takes_async(&Ready(BuiltinSummarizer::default()));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Ready<S>(pub S);

impl<S: Summarizer> AsyncSummarizer for Ready<S> {
    fn summarize(
        &self,
        request: &SummaryRequest<'_>,
    ) -> impl Future<Output = Result<String, SummarizeError>> + Send {
        std::future::ready(self.0.summarize(request))
    }
}

/// The built-in summarizer: deterministic, no model, no network.
///
/// For each entry it keeps what identifies the work (role, tool name and command, file
/// paths, exit status), then, as the budget allows and in this order: every line that
/// looks like an error, failure or traceback, the first and last lines, and the
/// identifiers found in the text (paths, `a::b` symbols, `file.ext:line` positions, error
/// names). It ends with the counts of what it elided. The budget is read as about four
/// bytes a token.
///
/// ```
/// use favur_context::{strict, BuiltinSummarizer, EntryId, History, Retention, Summarizer, SummaryRequest};
/// let mut h = History::new();
/// let a = h.append(strict!(tool_call: "c1", "bash", serde_json::json!({"command": "cargo test"})));
/// let b = h.append(strict!(tool_error("c1"): "running 3 tests\ntest parse ... FAILED\nthread 'main' panicked at src/parse.rs:42:9\nexit status 101"));
/// let (a, b) = (h.recall(a).unwrap(), h.recall(b).unwrap());
/// let entries = [&*a, &*b];
/// let req = SummaryRequest { summary: EntryId(2), tier: 2, retention: Retention::Strict, budget_tokens: 200, entries: &entries };
/// let text = BuiltinSummarizer::default().summarize(&req).unwrap();
/// assert!(text.contains("bash"), "{text}");
/// assert!(text.contains("cargo test"));
/// assert!(text.contains("exit status 101"));
/// assert!(text.contains("panicked at src/parse.rs:42:9"));
/// ```
#[derive(Debug, Clone)]
pub struct BuiltinSummarizer {
    /// Lines kept from the start of each entry.
    pub head_lines: usize,
    /// Lines kept from the end of each entry.
    pub tail_lines: usize,
    /// Most identifiers listed per summary.
    pub max_identifiers: usize,
    /// Longest line kept, in bytes (longer ones are cut with `…`).
    pub max_line_bytes: usize,
}

impl Default for BuiltinSummarizer {
    fn default() -> Self {
        BuiltinSummarizer {
            head_lines: 2,
            tail_lines: 2,
            max_identifiers: 40,
            max_line_bytes: 200,
        }
    }
}

impl Summarizer for BuiltinSummarizer {
    fn summarize(&self, request: &SummaryRequest<'_>) -> Result<String, SummarizeError> {
        Ok(self.summarize_entries(request.entries, request.budget_tokens))
    }
}

/// What the summarizer noted about one entry.
struct Digest<'a> {
    header: String,
    lines: Vec<&'a str>,
    errors: Vec<usize>,
    error_lines_total: usize,
    chosen: Vec<usize>,
}

const MAX_ERROR_LINES: usize = 64;
/// Lines at the start of an entry scanned for identifiers.
const IDENT_HEAD_LINES: usize = 24;
/// Lines at the end of an entry scanned for identifiers.
const IDENT_TAIL_LINES: usize = 8;

impl BuiltinSummarizer {
    /// Summarizes `entries` within about `budget_tokens` (four bytes a token).
    ///
    /// ```
    /// use favur_context::{forgettable, BuiltinSummarizer, History};
    /// let mut h = History::new();
    /// let id = h.append(forgettable!(tool_result("c1"): "Cargo.toml\nsrc/lib.rs\nsrc/main.rs\ntests/a.rs"));
    /// let entry = h.recall(id).unwrap();
    /// let text = BuiltinSummarizer::default().summarize_entries(&[&*entry], 100);
    /// assert!(text.contains("src/lib.rs"));
    /// assert!(text.len() <= 100 * 4);
    /// ```
    pub fn summarize_entries(&self, entries: &[&Entry], budget_tokens: u32) -> String {
        let budget = (budget_tokens as usize).saturating_mul(4);
        let mut names: Vec<(&str, &str)> = Vec::new();
        let mut digests: Vec<Digest<'_>> = Vec::with_capacity(entries.len());
        let mut idents = Identifiers::new(self.max_identifiers);
        let mut total_lines = 0usize;
        for e in entries {
            let d = self.digest(e, &mut names, &mut idents);
            total_lines += d.lines.len();
            digests.push(d);
        }

        // Headers first: they say what the work was.
        let reserve = 80; // the closing line of counts
        let mut used = 0usize;
        let mut shown = 0usize;
        for d in &digests {
            if used + d.header.len() + 1 + reserve > budget {
                break;
            }
            used += d.header.len() + 1;
            shown += 1;
        }
        let tail_note = if shown < digests.len() {
            format!("(+{} more entries not described)\n", digests.len() - shown)
        } else {
            String::new()
        };
        used += tail_note.len();

        let limit = self.max_line_bytes;
        let cost = |line: &str| line.len().min(limit) + 6;
        // Adds line `li` of digest `d` if it fits under `cap` bytes in all.
        let add = |d: &mut Digest<'_>, li: usize, used: &mut usize, cap: usize| -> bool {
            if d.chosen.contains(&li) || d.lines[li].trim().is_empty() {
                return true;
            }
            let c = cost(d.lines[li]);
            if *used + c + reserve > cap {
                return false;
            }
            *used += c;
            d.chosen.push(li);
            true
        };
        // The first line of each entry.
        for d in digests.iter_mut().take(shown) {
            if !d.lines.is_empty() {
                add(d, 0, &mut used, budget);
            }
        }
        // Error-like lines, round-robin, up to 70% of the budget; identifiers up to 85%;
        // then the other first and last lines; then the remaining error lines.
        let error_rounds = |digests: &mut Vec<Digest<'_>>, used: &mut usize, cap: usize| {
            let mut round = 0usize;
            loop {
                let mut any = false;
                for d in digests.iter_mut().take(shown) {
                    if let Some(&li) = d.errors.get(round) {
                        any |= add(d, li, used, cap);
                    }
                }
                if !any {
                    break;
                }
                round += 1;
            }
        };
        error_rounds(&mut digests, &mut used, budget * 7 / 10);
        let mut ident_line = String::new();
        let mut listed = 0usize;
        let ident_cap = budget * 85 / 100;
        for id in &idents.list {
            let in_lines = digests.iter().take(shown).any(|d| {
                d.header.contains(id.as_str())
                    || d.chosen.iter().any(|&li| d.lines[li].contains(id.as_str()))
            });
            if in_lines {
                listed += 1;
                continue;
            }
            let extra = if ident_line.is_empty() {
                "identifiers: ".len() + 1
            } else {
                2
            };
            if used + extra + id.len() + reserve > ident_cap {
                break;
            }
            used += extra + id.len();
            ident_line.push_str(if ident_line.is_empty() {
                "identifiers: "
            } else {
                ", "
            });
            ident_line.push_str(id);
            listed += 1;
        }
        let rounds = self.head_lines.max(self.tail_lines);
        for r in 0..rounds {
            for d in digests.iter_mut().take(shown) {
                let n = d.lines.len();
                if r < self.head_lines && r < n {
                    add(d, r, &mut used, budget);
                }
                if r < self.tail_lines && r < n {
                    add(d, n - 1 - r, &mut used, budget);
                }
            }
        }
        error_rounds(&mut digests, &mut used, budget);

        let mut out = String::with_capacity(budget.min(1 << 16));
        let mut kept_lines = 0usize;
        for d in digests.iter_mut().take(shown) {
            out.push_str(&d.header);
            out.push('\n');
            d.chosen.sort_unstable();
            for &li in &d.chosen {
                out.push_str("  | ");
                push_cut(&mut out, d.lines[li], limit);
                out.push('\n');
            }
            kept_lines += d.chosen.len();
        }
        out.push_str(&tail_note);
        if !ident_line.is_empty() {
            out.push_str(&ident_line);
            out.push('\n');
        }
        let errors_total: usize = digests.iter().map(|d| d.error_lines_total).sum();
        let _ = write!(
            out,
            "elided: {} of {} lines ({} error-like)",
            total_lines - kept_lines.min(total_lines),
            total_lines,
            errors_total
        );
        let more_idents = idents.seen - listed;
        if more_idents > 0 {
            let _ = write!(out, ", {more_idents} identifiers");
        }
        out.push('\n');
        out
    }

    fn digest<'a>(
        &self,
        e: &'a Entry,
        names: &mut Vec<(&'a str, &'a str)>,
        idents: &mut Identifiers,
    ) -> Digest<'a> {
        let m = &e.message;
        let mut header = format!("{} {}", e.id, role_name(m.role));
        if e.kind.is_summary() {
            header.push_str(" (summary)");
        }
        let mut lines: Vec<&'a str> = Vec::new();
        for part in &m.parts {
            match part {
                Part::Text(t) => lines.extend(t.split('\n')),
                Part::ToolCall(c) => {
                    names.push((c.id.as_str(), c.name.as_str()));
                    let args = match &c.arguments {
                        Arguments::Json(v) => command_of(v),
                        Arguments::Invalid(raw) => raw.clone(),
                    };
                    header.push_str(" → ");
                    header.push_str(&c.name);
                    header.push(' ');
                    push_cut(&mut header, &args, 140);
                    idents.scan_line(&args);
                }
                Part::ToolResult(r) => {
                    let name = names
                        .iter()
                        .rev()
                        .find(|(id, _)| *id == r.call_id)
                        .map(|(_, n)| *n);
                    match name {
                        Some(n) => {
                            let _ = write!(header, " result of {n} ({})", r.call_id);
                        }
                        None => {
                            let _ = write!(header, " result of call {}", r.call_id);
                        }
                    }
                    if r.is_error {
                        header.push_str(" [error]");
                    }
                    lines.extend(r.content.split('\n'));
                }
            }
        }
        if lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        let mut errors: Vec<(LineKind, usize)> = Vec::new();
        let mut error_lines_total = 0usize;
        let mut status: Option<&str> = None;
        let n_lines = lines.len();
        for (i, line) in lines.iter().enumerate() {
            let kind = classify_line(line.as_bytes());
            if kind != LineKind::Plain {
                error_lines_total += 1;
                if kind == LineKind::Status && status.is_none() {
                    // Shown in the header.
                    status = Some(line.trim());
                } else if errors.len() < MAX_ERROR_LINES {
                    errors.push((kind, i));
                }
            }
            // Identifiers come from the head and tail of each entry and from its
            // error-like lines: bounded work per entry, the most telling names.
            let near_edge = i < IDENT_HEAD_LINES || i + IDENT_TAIL_LINES >= n_lines;
            if !idents.full() && (near_edge || kind != LineKind::Plain) {
                idents.scan_line(line);
            }
        }
        // Strongest first, then in order.
        errors.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let errors: Vec<usize> = errors.into_iter().map(|(_, i)| i).collect();
        if let Some(s) = status {
            header.push_str(" {");
            push_cut(&mut header, s, 60);
            header.push('}');
        }
        if !lines.is_empty() {
            let plural = if lines.len() == 1 { "" } else { "s" };
            let _ = write!(header, " ({} line{plural})", lines.len());
        }
        if header.len() > 240 {
            let cut = floor_boundary(&header, 239);
            header.truncate(cut);
            header.push('…');
        }
        Digest {
            header,
            lines,
            errors,
            error_lines_total,
            chosen: Vec::new(),
        }
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// The command of a tool call: its `command`/`cmd`/`path`/`query` argument if there is
/// one, else the compact JSON.
fn command_of(v: &serde_json::Value) -> String {
    if let Some(obj) = v.as_object() {
        for key in ["command", "cmd", "path", "file", "query", "pattern", "url"] {
            if let Some(s) = obj.get(key).and_then(|s| s.as_str()) {
                return format!("{key}={s}");
            }
        }
    }
    v.to_string()
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn push_cut(out: &mut String, s: &str, limit: usize) {
    if s.len() <= limit {
        out.push_str(s);
    } else {
        out.push_str(&s[..floor_boundary(s, limit)]);
        out.push('…');
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum LineKind {
    Plain,
    /// A failure, an assertion, a stack frame.
    Weak,
    /// An error, a panic, an exception, a traceback header.
    Strong,
    /// An exit status.
    Status,
}

#[inline]
fn starts_ci(hay: &[u8], needle: &[u8]) -> bool {
    hay.len() >= needle.len()
        && hay
            .iter()
            .zip(needle)
            .all(|(&h, &n)| h.to_ascii_lowercase() == n)
}

/// Letters that start a keyword (either case).
static FIRST: [bool; 256] = {
    let mut t = [false; 256];
    let letters = b"efptaEFPTA";
    let mut i = 0;
    while i < letters.len() {
        t[letters[i] as usize] = true;
        i += 1;
    }
    t
};
const ER: u16 = u16::from_le_bytes(*b"er");
const EX: u16 = u16::from_le_bytes(*b"ex");
const FA: u16 = u16::from_le_bytes(*b"fa");
const PA: u16 = u16::from_le_bytes(*b"pa");
const TR: u16 = u16::from_le_bytes(*b"tr");
const AS: u16 = u16::from_le_bytes(*b"as");

/// Whether a line looks like an error, failure, traceback frame or exit status.
fn classify_line(line: &[u8]) -> LineKind {
    let trimmed = line.trim_ascii_start();
    let mut kind = LineKind::Plain;
    if trimmed.starts_with(b"File \"") || trimmed.starts_with(b"at ") && trimmed.contains(&b':') {
        kind = LineKind::Weak;
    }
    let n = line.len();
    let mut i = 0;
    while i + 4 <= n {
        // Cheap filters first: every keyword starts with one of a few letters, then with
        // one of a few pairs.
        match line[i..n - 3].iter().position(|&c| FIRST[usize::from(c)]) {
            Some(skip) => i += skip,
            None => break,
        }
        let pair = u16::from_le_bytes([line[i] | 0x20, line[i + 1] | 0x20]);
        if !matches!(pair, ER | EX | FA | PA | TR | AS) {
            i += 1;
            continue;
        }
        // A keyword inside a path or a word ("src/error.rs", "sparse") does not count;
        // one ending a CamelCase name ("ValueError") does.
        let prev = if i > 0 { line[i - 1] } else { b' ' };
        let camel = prev.is_ascii_lowercase() && line[i].is_ascii_uppercase();
        if prev == b'/' || prev == b'.' || (prev.is_ascii_alphanumeric() && !camel) {
            i += 1;
            continue;
        }
        let rest = &line[i..];
        let file_like = |len: usize| {
            rest.get(len) == Some(&b'.') && rest.get(len + 1).is_some_and(u8::is_ascii_alphabetic)
        };
        let found = match line[i] | 0x20 {
            b'e' if starts_ci(rest, b"exit code")
                || starts_ci(rest, b"exit status")
                || starts_ci(rest, b"exited with") =>
            {
                return LineKind::Status;
            }
            b'e' if (starts_ci(rest, b"error") && !file_like(5))
                || starts_ci(rest, b"exception") =>
            {
                LineKind::Strong
            }
            b'f' if starts_ci(rest, b"fatal") => LineKind::Strong,
            b'f' if starts_ci(rest, b"fail") && !file_like(4) => LineKind::Weak,
            b'p' if starts_ci(rest, b"panic") => LineKind::Strong,
            b't' if starts_ci(rest, b"traceback") => LineKind::Strong,
            b'a' if starts_ci(rest, b"assert") => LineKind::Weak,
            _ => LineKind::Plain,
        };
        kind = kind.max(found);
        i += 1;
    }
    kind
}

/// The distinct identifiers of a run, in order of first appearance, up to a maximum.
struct Identifiers {
    list: Vec<String>,
    max: usize,
    seen: usize,
    /// The last token considered: repeated names cost one comparison.
    last: String,
}

impl Identifiers {
    fn new(max: usize) -> Self {
        Identifiers {
            list: Vec::new(),
            max,
            seen: 0,
            last: String::new(),
        }
    }

    fn full(&self) -> bool {
        self.list.len() >= self.max
    }

    fn scan_line(&mut self, line: &str) {
        let bytes = line.as_bytes();
        let n = bytes.len();
        let mut i = 0;
        while i < n {
            while i < n && DELIMITER[usize::from(bytes[i])] {
                i += 1;
            }
            let start = i;
            let mut marked = false;
            while i < n && !DELIMITER[usize::from(bytes[i])] {
                let c = bytes[i];
                marked |= c == b'/' || c == b':' || c == b'.';
                i += 1;
            }
            if i - start < 3 {
                continue;
            }
            // Delimiters are ASCII, so `start..i` is on character boundaries.
            let Some(token) = line.get(start..i) else {
                continue;
            };
            if marked || token.ends_with("Error") || token.ends_with("Exception") {
                self.consider(token);
                if self.full() {
                    return;
                }
            }
        }
    }

    fn consider(&mut self, token: &str) {
        let t = token.trim_end_matches(['.', ':', ',']);
        if t.len() < 3 || t.len() > 120 || self.last == t {
            return;
        }
        self.last.clear();
        self.last.push_str(t);
        if !is_identifier(t) || self.list.iter().any(|x| x == t) {
            return;
        }
        self.seen += 1;
        if !self.full() {
            self.list.push(t.to_owned());
        }
    }
}

/// Bytes that separate tokens when looking for identifiers.
static DELIMITER: [bool; 256] = {
    let mut t = [false; 256];
    let delims = b" \t\r\n\"'(),;[]{}<>=`";
    let mut i = 0;
    while i < delims.len() {
        t[delims[i] as usize] = true;
        i += 1;
    }
    t
};

fn is_identifier(t: &str) -> bool {
    let b = t.as_bytes();
    if !b.iter().any(|c| c.is_ascii_alphabetic()) {
        return false;
    }
    if t.contains("://") {
        return true;
    }
    if t.contains('/') || t.contains("::") {
        return b
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || b"/_-.:~@+".contains(c));
    }
    if (t.ends_with("Error") || t.ends_with("Exception")) && b[0].is_ascii_uppercase() {
        return b
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.');
    }
    // name.ext or name.ext:line[:col]
    let base = t.split(':').next().unwrap_or(t);
    let positions_ok = t
        .split(':')
        .skip(1)
        .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()));
    if let Some((name, ext)) = base.rsplit_once('.') {
        return !name.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.bytes().all(|c| c.is_ascii_alphanumeric())
            && ext.bytes().any(|c| c.is_ascii_alphabetic())
            && name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"_-.".contains(&c))
            && positions_ok;
    }
    false
}
