//! Exact-text spans: the text an agent copies back verbatim (a `sed` pattern, the old
//! string of a replacement, a line of code it repeats in a heredoc).
//!
//! A *span candidate* of an assistant message is
//!
//! - a quoted string (`'...'` or `"..."`, on one line) anywhere in its text or in the
//!   command of one of its calls, or
//! - a line of the command it runs (the `command` of each tool call, or for a plain-chat
//!   agent the command parsed from its fenced bash block), heredoc bodies included,
//!
//! trimmed, of at least [`MIN_CHARS`] characters. A candidate is a *span* of that message
//! when its first occurrence in the run (as a substring of a message's text, call commands
//! and tool-output contents, in order) was in a tool output (a tool result or a plain-chat
//! observation): not typed by the agent first, not in the system prompt and not in the
//! task (the first user message). Its *source* is that tool output. A span *survives* if
//! it is a substring of the request the message answered (every string of the rendered
//! request, tool-call arguments also decoded from their JSON).

use favur_context::Role;
use memchr::memmem::Finder;

use crate::fate::Fate;
use crate::transcript::ClassifiedTranscript;

/// The fewest characters (after trimming) a span has.
pub const MIN_CHARS: usize = 16;

/// One span of an assistant message.
#[derive(Debug, Clone)]
pub struct Span {
    /// The text, trimmed.
    pub text: String,
    /// The transcript index of the tool output where it first occurred.
    pub source: usize,
    finder: Finder<'static>,
}

impl PartialEq for Span {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.source == other.source
    }
}

impl Span {
    /// A span of `text` first seen in message `source`.
    ///
    /// See [`Span`] for an example.
    pub fn new(text: &str, source: usize) -> Self {
        Span {
            text: text.to_owned(),
            source,
            finder: Finder::new(text.as_bytes()).into_owned(),
        }
    }

    /// Whether the span is a substring of `haystack`.
    ///
    /// See [`Span`] for an example.
    pub fn found_in(&self, haystack: &str) -> bool {
        self.finder.find(haystack.as_bytes()).is_some()
    }
}

/// Whether a quote at byte `at` of `line` stands next to a word character on `side`
/// (an apostrophe inside a word, as in `don't`, neither opens nor closes).
fn word_byte_at(line: &[u8], at: Option<usize>) -> bool {
    at.and_then(|i| line.get(i))
        .is_some_and(|b| b.is_ascii_alphanumeric())
}

/// The quoted strings of `text` (`'...'` or `"..."`, each on one line), their contents
/// trimmed. A quote opens only where it does not follow a letter or digit, and closes at
/// the next same quote (not escaped by a backslash, for `"`) that no letter or digit
/// follows.
pub fn quoted(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let q = b[i];
            if !matches!(q, b'\'' | b'"') || word_byte_at(b, i.checked_sub(1)) {
                i += 1;
                continue;
            }
            let mut j = i + 1;
            let mut close = None;
            while j < b.len() {
                if q == b'"' && b[j] == b'\\' {
                    j += 2;
                    continue;
                }
                if b[j] == q && !word_byte_at(b, Some(j + 1)) {
                    close = Some(j);
                    break;
                }
                j += 1;
            }
            let Some(end) = close else { break };
            if let Some(inner) = line.get(i + 1..end) {
                out.push(inner.trim());
            }
            i = end + 1;
        }
    }
    out
}

/// The span candidates of an assistant message with `text` running `commands`: its
/// quoted strings and the lines of its commands, trimmed, of at least [`MIN_CHARS`]
/// characters, each once, in order.
pub fn candidates<'a>(text: &'a str, commands: &'a [String]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    let sources = std::iter::once(text).chain(commands.iter().map(String::as_str));
    let quotes = sources.flat_map(quoted);
    let lines = commands.iter().flat_map(|c| c.lines()).map(str::trim);
    for c in quotes.chain(lines) {
        if c.chars().count() >= MIN_CHARS && !c.contains('\0') && !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// The commands message `index` runs: those of its tool calls, or (a plain-chat agent)
/// the command of the call the tool outputs right after it answer.
fn commands(t: &ClassifiedTranscript, index: usize) -> Vec<String> {
    let Some(m) = t.message(index) else {
        return Vec::new();
    };
    let calls: Vec<String> = m
        .tool_calls()
        .map(|c| favur_context::import::rules::command_of(&c.arguments))
        .collect();
    if !calls.is_empty() {
        return calls;
    }
    let next = index + 1;
    if t.results.get(next).copied().unwrap_or(false)
        && let Some(Some(call)) = t.answers.get(next)
    {
        return vec![favur_context::import::rules::command_of(&call.arguments)];
    }
    Vec::new()
}

/// The whole run as one text: each message's text, call commands and tool-output
/// contents, separated by NUL, with the byte offset where each message starts.
struct Corpus {
    text: String,
    starts: Vec<usize>,
}

impl Corpus {
    fn new(t: &ClassifiedTranscript, text_of: impl Fn(&favur_context::Message) -> String) -> Self {
        let mut text = String::new();
        let mut starts = Vec::with_capacity(t.messages.len());
        for m in &t.messages {
            starts.push(text.len());
            text.push_str(&text_of(m.classified.message()));
            text.push('\0');
        }
        Corpus { text, starts }
    }

    /// The message whose text holds the first occurrence of `needle`, searching no
    /// further than the end of message `upto`.
    fn first(&self, needle: &str, upto: usize) -> Option<usize> {
        let end = self
            .starts
            .get(upto + 1)
            .copied()
            .unwrap_or(self.text.len());
        let hay = self.text.get(..end)?;
        let at = memchr::memmem::find(hay.as_bytes(), needle.as_bytes())?;
        Some(self.starts.partition_point(|s| *s <= at).saturating_sub(1))
    }
}

/// The spans of every message of `t` (empty but for assistant messages), worked out with
/// `text_of` as the searchable text of a message (its text, call commands and tool-output
/// contents).
pub(crate) fn find_spans(
    t: &ClassifiedTranscript,
    text_of: impl Fn(&favur_context::Message) -> String,
) -> Vec<Vec<Span>> {
    let corpus = Corpus::new(t, &text_of);
    let task = t
        .messages
        .iter()
        .position(|m| m.classified.message().role == Role::User);
    let mut out = vec![Vec::new(); t.messages.len()];
    for (j, slot) in out.iter_mut().enumerate() {
        let Some(m) = t.message(j) else { continue };
        if m.role != Role::Assistant {
            continue;
        }
        let text = m.text();
        let cmds = commands(t, j);
        for c in candidates(&text, &cmds) {
            let Some(k) = corpus.first(c, j) else {
                continue;
            };
            let from_output = k < j
                && Some(k) != task
                && t.results.get(k).copied().unwrap_or(false)
                && t.message(k).is_some_and(|s| s.role != Role::System);
            if from_output {
                slot.push(Span::new(c, k));
            }
        }
    }
    out
}

/// What happened to one span at one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanOutcome {
    /// Position of the span in [`Prepared::spans`](crate::replay::Prepared::spans) of the answering message.
    pub span: usize,
    /// Transcript index of the tool output where the span first occurred.
    pub source: usize,
    /// Whether the span was verbatim in the request.
    pub survived: bool,
    /// Where that tool output was in the request's view.
    pub fate: Fate,
}

#[cfg(test)]
mod tests;
