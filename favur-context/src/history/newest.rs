//! The newest entries of a history: what an agent loop reads back after each step (the
//! reply it just recorded, the last user turn) without walking the view itself.

use crate::history::History;
use crate::model::entry::Entry;
use crate::model::message::Role;

impl History {
    /// The newest entry appended or pinned (not a summary the engine wrote), if any. The
    /// newest entries are never compacted, so it is held in memory whatever the store.
    ///
    /// ```
    /// use favur_context::{fuzzy, strict, History};
    /// let mut h = History::new();
    /// assert!(h.last_entry().is_none());
    /// h.append(strict!(user: "fix the parser"));
    /// let reply = h.append(fuzzy!(assistant: "on it"));
    /// assert_eq!(h.last_entry().map(|e| e.id()), Some(reply));
    /// ```
    pub fn last_entry(&self) -> Option<&Entry> {
        self.entries.iter().rev().find(|e| !e.kind().is_summary())
    }

    /// The newest entry of `role` that the model sees as it was recorded: in the view (not a
    /// summary the engine wrote) or pinned. `None` when there is none, or when the newest
    /// one of that role has been compacted away.
    ///
    /// ```
    /// use favur_context::{fuzzy, strict, History, Role};
    /// let mut h = History::new();
    /// h.pin(strict!(system: "You are a coding agent."));
    /// let task = h.append(strict!(user: "fix the parser"));
    /// let reply = h.append(fuzzy!(assistant: "on it"));
    /// assert_eq!(h.last_of_role(Role::Assistant).map(|e| e.id()), Some(reply));
    /// assert_eq!(h.last_of_role(Role::User).map(|e| e.id()), Some(task));
    /// assert_eq!(h.last_of_role(Role::System).map(|e| e.message().text()), Some("You are a coding agent.".into()));
    /// assert!(h.last_of_role(Role::Tool).is_none());
    /// ```
    pub fn last_of_role(&self, role: Role) -> Option<&Entry> {
        let in_view = self
            .view()
            .items()
            .iter()
            .rev()
            .filter_map(|item| self.entry(item.id))
            .find(|e| !e.kind().is_summary() && e.message().role == role);
        let pinned = self
            .pinned()
            .iter()
            .rev()
            .filter_map(|id| self.entry(*id))
            .find(|e| e.message().role == role);
        match (in_view, pinned) {
            (Some(a), Some(b)) => Some(if a.id() > b.id() { a } else { b }),
            (a, b) => a.or(b),
        }
    }

    /// The newest assistant turn as recorded (its text, tool calls, reasoning): the reply
    /// a loop just appended. Shorthand for [`last_of_role`](History::last_of_role) with
    /// [`Role::Assistant`].
    ///
    /// ```
    /// use favur_context::{fuzzy, History, ToolCall};
    /// let mut h = History::new();
    /// h.append(fuzzy!(assistant: "looking"));
    /// h.append(fuzzy!(tool_call: "c1", "bash", serde_json::json!({"command": "ls"})));
    /// let last = h.last_assistant().unwrap();
    /// assert_eq!(last.message().tool_calls().next().map(|c| c.id.as_str()), Some("c1"));
    /// ```
    pub fn last_assistant(&self) -> Option<&Entry> {
        self.last_of_role(Role::Assistant)
    }
}
