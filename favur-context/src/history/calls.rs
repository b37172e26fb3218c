//! Tool calls and their results in a history: the calls still unanswered, the entries
//! that answer a call, and the classified result of a tool's call.

use crate::history::History;
use crate::history::result_ids::ResultIds;
use crate::model::classify::Classified;
use crate::model::entry::{Entry, EntryId};
use crate::model::message::{Arguments, Message, ToolCall};
use crate::model::site::CallSite;
use crate::model::tool::ClassifiedTool;

impl History {
    /// The tool calls of the in-flight tail that no entry answers yet, in order, with the
    /// entry that made each: what a process killed between a model's tool calls and their
    /// results left open. The tail is the run of tool-call and tool-result entries at the
    /// end of the view. Answer each (run the tool again, or append an error result) before
    /// the next request; they are copies, so the history can be appended to meanwhile.
    ///
    /// ```
    /// use favur_context::{fuzzy, strict, History};
    /// use serde_json::json;
    /// let mut h = History::new();
    /// h.append(strict!(user: "list and read"));
    /// let calls = h.append(fuzzy!(tool_calls: [("c1", "ls", json!({})), ("c2", "cat", json!({"path": "a.rs"}))]));
    /// h.append(fuzzy!(tool_result("c1"): "a.rs"));
    /// // killed here: c2 was never answered
    /// let pending = h.pending_calls();
    /// assert_eq!(pending.len(), 1);
    /// assert_eq!((pending[0].0, pending[0].1.id.as_str()), (calls, "c2"));
    /// for (_, call) in pending {
    ///     h.append(fuzzy!(tool_error(call.id): "interrupted; call {} again if needed", call.name));
    /// }
    /// assert!(h.pending_calls().is_empty());
    /// ```
    pub fn pending_calls(&self) -> Vec<(EntryId, ToolCall)> {
        let items = self.view.items();
        let in_tail = |e: &Entry| {
            e.message.role == crate::model::message::Role::Tool
                || e.message.tool_calls().next().is_some()
        };
        let start = items
            .iter()
            .rposition(|item| self.entry(item.id).is_none_or(|e| !in_tail(e)))
            .map_or(0, |i| i + 1);
        let mut pending = Vec::new();
        for item in &items[start..] {
            let Some(entry) = self.entry(item.id) else {
                continue;
            };
            for call in entry.message.tool_calls() {
                let answered = self.result_entries(&call.id).iter().any(|r| *r > entry.id);
                if !answered {
                    pending.push((entry.id, call.clone()));
                }
            }
        }
        pending
    }

    /// The entries (held or evicted) that hold a result for the tool call `call_id`, in
    /// id order.
    pub(crate) fn result_entries(&self, call_id: &str) -> &[EntryId] {
        self.results.get(call_id).map_or(&[], ResultIds::as_slice)
    }

    /// Indexes the tool results `entry` holds by call id.
    pub(super) fn index_results(&mut self, entry: &Entry) {
        for result in entry.message.tool_results() {
            let ids = self.results.entry(result.call_id.clone()).or_default();
            ids.push_new(entry.id);
        }
    }
}

/// The classified tool-result message for `output` of a call answered by `T`.
pub(crate) fn tool_result<T: ClassifiedTool + ?Sized>(
    call_id: String,
    output: Result<String, String>,
    site: CallSite,
) -> Classified {
    let (content, is_error) = match output {
        Ok(out) => (out, false),
        Err(err) => (err, true),
    };
    let message = Message::tool_result(call_id, content, is_error);
    Classified::with_site(message, T::RETENTION, site)
}

/// Runs `tool` for `call`; invalid JSON arguments are an error output, not a call.
pub(crate) fn run<T: ClassifiedTool + ?Sized>(tool: &T, call: &ToolCall) -> Result<String, String> {
    match &call.arguments {
        Arguments::Json(args) => tool.call(args),
        Arguments::Invalid(raw) => Err(format!(
            "the arguments of this call are not valid JSON: {raw}"
        )),
    }
}
