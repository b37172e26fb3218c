//! The recall tool: lets the model ask for the original of an entry a summary mentions.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::classify::Classified;
use crate::entry::{Entry, EntryId, EntryKind};
use crate::history::History;
use crate::journal::{JournaledHistory, RecallError};
use crate::message::{Arguments, Message, Part, ToolCall};
use crate::retention::Retention;
use crate::site::CallSite;

/// Anything that can give back the original of an entry by id: a [`History`] (every
/// original it holds) or a [`JournaledHistory`] (reading evicted originals back from its
/// file).
///
/// ```
/// use favur_context::{strict, History, RecallSource};
/// let mut h = History::new();
/// let id = h.append(strict!(user: "the plan"));
/// assert_eq!(h.recall_entry(id).unwrap().message().text(), "the plan");
/// ```
pub trait RecallSource {
    /// The original entry with this id.
    ///
    /// # Errors
    ///
    /// [`RecallError::UnknownId`] if there is none; I/O or corruption errors when it has
    /// to be read back from a journal.
    fn recall_entry(&self, id: EntryId) -> Result<Cow<'_, Entry>, RecallError>;
}

impl RecallSource for History {
    fn recall_entry(&self, id: EntryId) -> Result<Cow<'_, Entry>, RecallError> {
        self.recall(id)
            .map(Cow::Borrowed)
            .ok_or(RecallError::UnknownId {
                id,
                next: self.next_id(),
            })
    }
}

impl RecallSource for JournaledHistory {
    fn recall_entry(&self, id: EntryId) -> Result<Cow<'_, Entry>, RecallError> {
        self.recall(id)
    }
}

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
/// use favur_context::{fuzzy, Compaction, Edit, JournaledHistory, RecallTool, Retention, ToolCall};
/// let path = std::env::temp_dir().join(format!("favur-doc-tool-{}.jsonl", std::process::id()));
/// # let _ = std::fs::remove_file(&path);
/// let mut history = JournaledHistory::open(&path)?;
/// let old = history.append(fuzzy!(tool_result("c1"): "fn main() {{}}"))?;
/// history.apply(Compaction { tier: 1, edits: vec![Edit::Drop { id: old }], usage_after: None })?;
///
/// // The model asks for it back:
/// let call = ToolCall::new("c2", RecallTool.name(), serde_json::json!({ "id": old.0 }));
/// let result = RecallTool.respond(&history, &call, Retention::Forgettable);
/// let id = history.append(result)?;
/// let text = &history.entry(id).unwrap().message().tool_results().next().unwrap().content;
/// assert!(text.contains("fn main() {}"));
/// # drop(history); std::fs::remove_file(&path).unwrap();
/// # Ok::<(), favur_context::JournalError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecallTool;

impl RecallTool {
    /// The tool's name: `"recall"`.
    ///
    /// ```
    /// assert_eq!(favur_context::RecallTool.name(), "recall");
    /// ```
    pub fn name(&self) -> &'static str {
        "recall"
    }

    /// What it does, for the model.
    ///
    /// ```
    /// assert!(favur_context::RecallTool.description().contains("original"));
    /// ```
    pub fn description(&self) -> &'static str {
        "Return the original, full content of an earlier conversation entry by its id \
         (the #N that a summary or a placeholder mentions). Use it when a summary left out \
         a detail you need, or to see a tool result that was dropped."
    }

    /// The JSON schema of its arguments: `{"id": <non-negative integer>}`.
    ///
    /// ```
    /// let schema = favur_context::RecallTool.parameters();
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
                }
            },
            "required": ["id"],
            "additionalProperties": false
        })
    }

    /// Name, description and parameters in one object
    /// (`{"name": ..., "description": ..., "parameters": ...}`).
    ///
    /// ```
    /// assert_eq!(favur_context::RecallTool.definition()["name"], "recall");
    /// ```
    pub fn definition(&self) -> Value {
        json!({
            "name": self.name(),
            "description": self.description(),
            "parameters": self.parameters(),
        })
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
    /// use favur_context::{strict, Arguments, History, RecallError, RecallTool};
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
    pub fn handle<S: RecallSource + ?Sized>(
        &self,
        source: &S,
        arguments: &Arguments,
    ) -> Result<String, RecallError> {
        let id = parse_id(arguments)?;
        let entry = source.recall_entry(id)?;
        Ok(self.render(&entry))
    }

    /// Answers `call` as a tool result classified with `retention` (chosen by the agent),
    /// ready to append: the original's text, or an error result saying what was wrong.
    /// Records the caller as the call site.
    ///
    /// ```
    /// use favur_context::{strict, History, RecallTool, Retention, ToolCall};
    /// let mut h = History::new();
    /// h.append(strict!(user: "exact words"));
    /// let answer = RecallTool.respond(&h, &ToolCall::new("c9", "recall", r#"{"id": 3}"#), Retention::Forgettable);
    /// let id = h.append(answer);
    /// let result = h.entry(id).unwrap().message().tool_results().next().unwrap().clone();
    /// assert!(result.is_error);
    /// assert_eq!(result.call_id, "c9");
    /// assert_eq!(result.content, "no entry #3 (ids run from #0 to #0)");
    /// ```
    #[track_caller]
    pub fn respond<S: RecallSource + ?Sized>(
        &self,
        source: &S,
        call: &ToolCall,
        retention: Retention,
    ) -> Classified {
        let site = CallSite::caller();
        let (content, is_error) = match self.handle(source, &call.arguments) {
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
    /// use favur_context::{strict, History, RecallTool};
    /// let mut h = History::new();
    /// let id = h.append(strict!(user: "exact words"));
    /// assert_eq!(RecallTool.render(h.entry(id).unwrap()), "entry #0 (user, strict)\nexact words");
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
            }
        }
        out
    }
}

fn parse_id(arguments: &Arguments) -> Result<EntryId, RecallError> {
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
