//! The recall tool: lets the model ask for the original of an entry a summary mentions.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::history::{History, RecallError};
use crate::model::classify::Classified;
use crate::model::entry::{Entry, EntryId, EntryKind};
use crate::model::message::{Arguments, Message, Part, ToolCall};
use crate::model::retention::Retention;
use crate::model::site::CallSite;
use crate::model::tool::ToolDefinition;
use crate::tokens::counter::TokenCounter;

/// A ready-made tool an agent exposes to its model so the model can ask for the original
/// of any entry by id (the `#12` that summaries and placeholders mention), whether it is
/// in the view, summarized or dropped.
///
/// Declare it to the model with [`name`](RecallTool::name),
/// [`description`](RecallTool::description) and [`parameters`](RecallTool::parameters)
/// (or [`definition`](RecallTool::definition)); when the model calls it, build the result
/// with [`respond`](RecallTool::respond) and append it with the class you choose, like any
/// other tool result.
///
/// ```
/// use favur_context::compact::{Compaction, Edit};
/// use favur_context::tools::RecallTool;
/// use favur_context::journal::JournaledHistory;
/// use favur_context::{fuzzy, Retention, Store, ToolCall};
/// let path = std::env::temp_dir().join(format!("favur-doc-tool-{}.jsonl", std::process::id()));
/// # let _ = std::fs::remove_file(&path);
/// let mut history = JournaledHistory::open(&path)?;
/// let old = history.append(fuzzy!(tool_result("c1"): "fn main() {{}}"))?;
/// history.apply(Compaction { tier: std::num::NonZeroU8::MIN, edits: vec![Edit::Drop { id: old }], usage_after: None })?;
///
/// // The model asks for it back:
/// let call = ToolCall::new("c2", RecallTool.name(), serde_json::json!({ "id": old.0 }));
/// let result = RecallTool.respond(history.history(), &call, Retention::Forgettable);
/// let id = history.append(result)?;
/// let entry = history.history().recall(id).unwrap();
/// assert!(entry.message().tool_results().next().unwrap().content.contains("fn main() {}"));
/// # drop(history); std::fs::remove_file(&path).unwrap();
/// # Ok::<(), favur_context::journal::JournalError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecallTool;

impl RecallTool {
    /// The tool's name: `"recall"`.
    pub fn name(&self) -> &'static str {
        "recall"
    }

    /// What it does, for the model.
    pub fn description(&self) -> &'static str {
        "Return the original, full content of an earlier conversation entry by its id \
         (the #N that a summary or a placeholder mentions). Use it when a summary left out \
         a detail you need, or to see a tool result that was dropped."
    }

    /// The JSON schema of its arguments: `{"id": <non-negative integer>, "page":
    /// <positive integer, optional>}`.
    ///
    /// ```
    /// let schema = favur_context::tools::RecallTool.parameters();
    /// assert_eq!(schema["required"], serde_json::json!(["id"]));
    /// assert_eq!(schema["properties"]["id"]["type"], "integer");
    /// ```
    pub fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "id": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "The entry id, the number after # (for #12, give 12)."
                },
                "page": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "For an original too long for one answer: which part to show (1 for the first; the answer says how many there are)."
                }
            },
            "required": ["id"],
            "additionalProperties": false
        })
    }

    /// Name, description and parameters, rendered in each provider's shape with
    /// [`ToolDefinition::to_openai`] and [`ToolDefinition::to_anthropic`] (or add the tool
    /// to a [`ToolSet`](crate::tools::ToolSet) with
    /// [`with_recall`](crate::tools::ToolSet::with_recall)).
    ///
    /// ```
    /// let def = favur_context::tools::RecallTool.definition();
    /// assert_eq!(def.to_openai()["function"]["name"], "recall");
    /// assert_eq!(def.to_anthropic()["input_schema"]["required"][0], "id");
    /// ```
    pub fn definition(&self) -> ToolDefinition {
        ToolDefinition::trusted(self.name(), self.description(), self.parameters())
    }

    /// Handles a call: reads the id from `arguments` and returns the original's text (see
    /// [`render`](RecallTool::render)). The id may also be given as a string such as
    /// `"12"` or `"#12"`.
    ///
    /// # Errors
    ///
    /// [`RecallError::InvalidArguments`] if there is no usable id,
    /// [`RecallError::UnknownId`] if no entry has it, or a journal read error.
    ///
    /// ```
    /// use favur_context::message::Arguments;
    /// use favur_context::store::RecallError;
    /// use favur_context::tools::RecallTool;
    /// use favur_context::{strict, History};
    /// let mut h = History::new();
    /// let id = h.append(strict!(user: "exact words"));
    /// let text = RecallTool.handle(&h, &Arguments::parse(r#"{"id": 0}"#)).unwrap();
    /// assert!(text.ends_with("exact words"));
    /// let err = RecallTool.handle(&h, &Arguments::parse(r#"{"id": 5}"#)).unwrap_err();
    /// assert!(matches!(err, RecallError::UnknownId { .. }));
    /// let err = RecallTool.handle(&h, &Arguments::parse(r#"{"id": -1}"#)).unwrap_err();
    /// assert!(matches!(err, RecallError::InvalidArguments { .. }));
    /// # let _ = id;
    /// ```
    pub fn handle(&self, history: &History, arguments: &Arguments) -> Result<String, RecallError> {
        self.handle_paged(history, arguments, None)
    }

    /// [`handle`](RecallTool::handle), with an answer of at most `page_tokens` (as a tool
    /// result, counted with the history's counter):
    /// an original longer than that is answered one part at a time (the `page` argument,
    /// from 1), each part saying which part of how many it is and how to ask for the
    /// next. Give it the policy's [per-entry cap](crate::Policy::entry_cap_tokens), so
    /// that no answer is cut by the cap (a cut answer would point at itself).
    ///
    /// # Errors
    ///
    /// As for [`handle`](RecallTool::handle); a page past the last is
    /// [`RecallError::InvalidArguments`].
    ///
    /// ```
    /// use favur_context::message::Arguments;
    /// use favur_context::tokens::TokenCounter;
    /// use favur_context::tools::RecallTool;
    /// use favur_context::{strict, History};
    /// let mut h = History::new();
    /// let long = (0..400).map(|i| format!("line {i}\n")).collect::<String>();
    /// let id = h.append(strict!(tool_result("c1"): "{long}"));
    /// let first = RecallTool.handle_paged(&h, &Arguments::parse(format!(r#"{{"id": {}}}"#, id.0)), Some(300)).unwrap();
    /// assert!(first.starts_with("entry #0 (tool, strict), part 1 of "), "{first}");
    /// assert!(h.counter().count_text(&first) <= 300);
    /// let last = RecallTool.handle_paged(&h, &Arguments::parse(r#"{"id": 0, "page": 99}"#), Some(300)).unwrap_err();
    /// assert!(last.to_string().contains("no page 99"), "{last}");
    /// ```
    pub fn handle_paged(
        &self,
        history: &History,
        arguments: &Arguments,
        page_tokens: Option<u32>,
    ) -> Result<String, RecallError> {
        let id = parse_id(arguments)?;
        let page = parse_page(arguments)?;
        let entry = history.recall(id)?;
        let text = self.render(&entry);
        let Some(limit) = page_tokens else {
            return Ok(text);
        };
        let counter = history.counter();
        let fits = |t: &str| counter.count_message(&Message::tool_result("", t, false)) <= limit;
        if fits(&text) && page == 1 {
            return Ok(text);
        }
        let pages = paginate(&text, limit, counter);
        let Some(&(start, end)) = pages.get(page - 1) else {
            return Err(RecallError::InvalidArguments {
                message: format!("no page {page}: entry {id} has {} pages", pages.len()),
            });
        };
        Ok(page_text(&text, id, &entry, page, &pages, start, end))
    }

    /// Answers `call` as a tool result classified with `retention` (chosen by the agent),
    /// ready to append: the original's text, or an error result saying what was wrong.
    /// Records the caller as the call site.
    ///
    /// ```
    /// use favur_context::tools::RecallTool;
    /// use favur_context::{strict, History, Retention, ToolCall};
    /// let mut h = History::new();
    /// h.append(strict!(user: "exact words"));
    /// let answer = RecallTool.respond(&h, &ToolCall::new("c9", "recall", r#"{"id": 3}"#), Retention::Forgettable);
    /// let id = h.append(answer);
    /// let result = h.recall(id).unwrap().message().tool_results().next().unwrap().clone();
    /// assert!(result.is_error);
    /// assert_eq!(result.call_id, "c9");
    /// assert_eq!(result.content, "no entry #3 (ids run from #0 to #0)");
    /// ```
    #[track_caller]
    pub fn respond(&self, history: &History, call: &ToolCall, retention: Retention) -> Classified {
        let site = CallSite::caller();
        let (content, is_error) = match self.handle(history, &call.arguments) {
            Ok(text) => (text, false),
            Err(e) => (e.to_string(), true),
        };
        Classified::with_site(
            Message::tool_result(call.id.clone(), content, is_error),
            retention,
            site,
        )
    }

    /// The text the tool returns for an entry: a first line naming it (id, role, class,
    /// and what it summarizes if it is a summary), then each part: text as it is, tool
    /// calls as `[tool call <id>: <name> <arguments>]`, tool results as
    /// `[tool result for <id>]` (or `[tool error for <id>]`) followed by the content.
    ///
    /// ```
    /// use favur_context::tools::RecallTool;
    /// use favur_context::{strict, History};
    /// let mut h = History::new();
    /// let id = h.append(strict!(user: "exact words"));
    /// assert_eq!(RecallTool.render(&h.recall(id).unwrap()), "entry #0 (user, strict)\nexact words");
    /// ```
    pub fn render(&self, entry: &Entry) -> String {
        let mut out = format!(
            "entry {} ({}, {}",
            entry.id(),
            entry.message().role,
            entry.retention()
        );
        match entry.kind() {
            EntryKind::Appended => {}
            EntryKind::Pinned => out.push_str(", pinned"),
            EntryKind::Summary { replaces } => {
                out.push_str(", summary of ");
                for (i, id) in replaces.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    let _ = write!(out, "{id}");
                }
            }
        }
        out.push(')');
        for part in &entry.message().parts {
            out.push('\n');
            match part {
                Part::Text(t) => out.push_str(t),
                Part::ToolCall(c) => {
                    let _ = write!(
                        out,
                        "[tool call {}: {} {}]",
                        c.id,
                        c.name,
                        c.arguments.to_json_string()
                    );
                }
                Part::ToolResult(r) => {
                    let what = if r.is_error { "error" } else { "result" };
                    let _ = write!(out, "[tool {what} for {}]\n{}", r.call_id, r.content);
                }
                // The visible text only: a signature or payload means nothing to read.
                Part::Reasoning(r) => {
                    let _ = write!(out, "[reasoning]\n{}", r.joined_text());
                }
                Part::Image(m) => out.push_str(&m.describe("image")),
                Part::Document(m) => out.push_str(&m.describe("document")),
            }
        }
        out
    }
}

/// The header reserved on each page, in tokens.
const PAGE_HEADER_TOKENS: u32 = 60;

/// Splits `text` into byte ranges each under `limit` tokens less the header, at line ends
/// where one is in the second half of a page.
fn paginate(text: &str, limit: u32, counter: &dyn TokenCounter) -> Vec<(usize, usize)> {
    let body = limit.saturating_sub(PAGE_HEADER_TOKENS).max(1);
    let mut pages = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let rest = &text[start..];
        // The longest prefix of `rest` that fits, by bisection over char boundaries.
        let (mut lo, mut hi) = (0usize, rest.len());
        if counter.count_text(rest) <= body {
            lo = rest.len();
        } else {
            while lo < hi {
                let mid = floor_char(rest, lo + (hi - lo).div_ceil(2));
                if mid <= lo {
                    break;
                }
                if counter.count_text(&rest[..mid]) <= body {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
        }
        let mut len = lo.max(ceil_char(rest, 1)); // always progress
        if len < rest.len()
            && let Some(nl) = rest[..len].rfind('\n')
            && nl + 1 >= len / 2
        {
            len = nl + 1;
        }
        pages.push((start, start + len));
        start += len;
    }
    pages
}

fn page_text(
    text: &str,
    id: EntryId,
    entry: &Entry,
    page: usize,
    pages: &[(usize, usize)],
    start: usize,
    end: usize,
) -> String {
    let n = pages.len();
    let mut out = format!(
        "entry {id} ({}, {}), part {page} of {n} (bytes {start}-{end} of {}); ",
        entry.message().role,
        entry.retention(),
        text.len()
    );
    if page < n {
        let _ = write!(
            out,
            "for the next part call recall with {{\"id\": {}, \"page\": {}}}",
            id.0,
            page + 1
        );
    } else {
        out.push_str("the last part");
    }
    out.push('\n');
    out.push_str(&text[start..end]);
    out
}

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

fn parse_page(arguments: &Arguments) -> Result<usize, RecallError> {
    let Some(page) = arguments.as_json().and_then(|v| v.get("page")) else {
        return Ok(1);
    };
    let parsed = match page {
        Value::Null => Some(1),
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    parsed
        .filter(|&p| p >= 1)
        .and_then(|p| usize::try_from(p).ok())
        .ok_or_else(|| RecallError::InvalidArguments {
            message: format!("`page` must be a positive integer, got {page}"),
        })
}

pub(crate) fn parse_id(arguments: &Arguments) -> Result<EntryId, RecallError> {
    let invalid = |message: String| RecallError::InvalidArguments { message };
    let value = match arguments {
        Arguments::Json(v) => v,
        Arguments::Invalid(raw) => {
            return Err(invalid(format!(
                "not valid JSON: {raw:?}; expected {{\"id\": <integer>}}"
            )));
        }
    };
    let Some(id) = value.get("id") else {
        return Err(invalid(format!(
            "no `id` in {value}; expected {{\"id\": <integer>}}"
        )));
    };
    let parsed = match id {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().trim_start_matches('#').parse::<u64>().ok(),
        _ => None,
    };
    parsed
        .map(EntryId)
        .ok_or_else(|| invalid(format!("`id` must be a non-negative integer, got {id}")))
}
