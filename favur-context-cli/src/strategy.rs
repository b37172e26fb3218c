//! What runs before each model request: the policy under test, or a baseline.

use std::num::NonZeroU8;

use favur_context::compact::{Compaction, Edit};
use favur_context::render::Form;
use favur_context::{EntryId, History, Message, Role};

use crate::ReplayError;

/// What a strategy did before one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// The tier that fired (`None` for a baseline's trim or mask).
    pub tier: Option<NonZeroU8>,
    /// Summarizer calls made.
    pub summarizer_calls: u32,
    /// Summarizer failures that fell back to the built-in summarizer.
    pub fallbacks: u32,
}

/// What a strategy decided before one request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Before {
    /// The compaction it made, if any.
    pub event: Option<Event>,
    /// Whether it refused the request (usage still at or over its limit).
    pub refused: bool,
}

impl From<Option<Event>> for Before {
    fn from(event: Option<Event>) -> Self {
        Before {
            event,
            refused: false,
        }
    }
}

/// Something that shapes the view before each model request: the compaction policy
/// under test or a baseline.
pub trait Strategy {
    /// A short label for reports ("policy", "trim-oldest(budget 12000)").
    fn label(&self) -> String;
    /// Called before each request, with the history as it stands; may compact it.
    fn before_request(&mut self, history: &mut History) -> Result<Before, ReplayError>;
    /// Tier thresholds as fractions of the window, for charts (none for baselines).
    fn thresholds(&self) -> Vec<f64> {
        Vec::new()
    }
    /// Told of each entry the replay records, and whether it is a tool output (a tool
    /// result, or a plain-chat observation).
    fn observe(&mut self, _id: EntryId, _is_result: bool) {}
    /// Called once after the last message was recorded, with the final history.
    fn finish(&mut self, _history: &History) {}
}

/// The baseline that never compacts.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCompaction;

impl Strategy for NoCompaction {
    fn label(&self) -> String {
        "no compaction".to_owned()
    }
    fn before_request(&mut self, _history: &mut History) -> Result<Before, ReplayError> {
        Ok(Before::default())
    }
}

/// The index in the view where the in-flight tail starts: everything after the last
/// assistant entry (which the model has not answered yet).
/// Records a baseline's edits as a compaction (no summarizer), if there are any. The
/// record carries tier 1 (a record always has a tier); the event has none, so reports
/// tell a baseline's trim or mask from the policy's tiers.
fn apply_baseline(history: &mut History, edits: Vec<Edit>) -> Result<Before, ReplayError> {
    if edits.is_empty() {
        return Ok(Before::default());
    }
    history.apply(Compaction {
        tier: NonZeroU8::MIN,
        edits,
        usage_after: None,
    })?;
    Ok(Some(Event {
        tier: None,
        summarizer_calls: 0,
        fallbacks: 0,
    })
    .into())
}

fn tail_start(history: &History) -> usize {
    let items = history.view().items();
    items
        .iter()
        .rposition(|item| {
            history
                .recall(item.id)
                .is_ok_and(|e| e.message().role == Role::Assistant)
        })
        .map_or(0, |i| i + 1)
}

/// The baseline that drops the oldest messages until the request fits `budget` tokens,
/// on every request. An assistant turn and the tool results that follow it go together,
/// so no call or result is orphaned; pinned entries and the in-flight tail stay.
#[derive(Debug, Clone, Copy)]
pub struct TrimOldest {
    /// The most tokens a request may carry.
    pub budget: u64,
}

impl Strategy for TrimOldest {
    fn label(&self) -> String {
        format!("trim-oldest (budget {})", self.budget)
    }

    fn before_request(&mut self, history: &mut History) -> Result<Before, ReplayError> {
        let mut usage = history.usage_tokens();
        if usage <= self.budget {
            return Ok(Before::default());
        }
        let framing = u64::from(history.framing_tokens());
        let tail = tail_start(history);
        let items = history.view().items();
        let mut edits = Vec::new();
        let mut i = 0;
        while i < tail && usage > self.budget {
            // A group: one item and the tool results right after it.
            let mut j = i + 1;
            while j < tail
                && history
                    .recall(items[j].id)
                    .is_ok_and(|e| e.message().role == Role::Tool)
            {
                j += 1;
            }
            for item in items[i..j].iter().filter(|item| !item.is_pinned()) {
                usage = usage.saturating_sub(u64::from(item.tokens) + framing * item.blocks());
                edits.push(Edit::Drop { id: item.id });
            }
            i = j;
        }
        apply_baseline(history, edits)
    }
}

/// The baseline that replaces every tool output but the last `keep` with a short
/// placeholder (the call stays, and the result keeps its call id, so the pairing stays
/// valid). A tool output is a tool result or a plain-chat observation.
#[derive(Debug, Clone)]
pub struct MaskOld {
    /// How many of the newest tool outputs stay verbatim.
    pub keep: usize,
    outputs: Vec<EntryId>,
}

impl MaskOld {
    /// Keeps the newest `keep` tool outputs.
    pub fn new(keep: usize) -> Self {
        MaskOld {
            keep,
            outputs: Vec::new(),
        }
    }
}

/// The message a masked output shows: the output's own message with its text elided
/// whole, each text and result content replaced by the placeholder text the engine uses
/// for a dropped result (a capped form a history accepts: derived from its own entry).
fn masked(history: &History, id: EntryId) -> Option<Message> {
    let e = history.recall(id).ok()?;
    let text = favur_context::render::placeholder_text(id, None);
    let mut m = e.message().clone();
    for part in &mut m.parts {
        match part {
            favur_context::message::Part::Text(t) => *t = text.clone(),
            favur_context::message::Part::ToolResult(r) => r.content = text.clone(),
            // Calls, reasoning and media are kept whole (a cap never cuts them).
            _ => {}
        }
    }
    Some(m)
}

impl Strategy for MaskOld {
    fn label(&self) -> String {
        format!("mask-old (last {})", self.keep)
    }

    fn observe(&mut self, id: EntryId, is_result: bool) {
        if is_result {
            self.outputs.push(id);
        }
    }

    fn before_request(&mut self, history: &mut History) -> Result<Before, ReplayError> {
        let cut = self.outputs.len().saturating_sub(self.keep);
        let verbatim: std::collections::HashSet<EntryId> = history
            .view()
            .items()
            .iter()
            .filter(|i| i.form == Form::Verbatim && !i.is_pinned())
            .map(|i| i.id)
            .collect();
        let mut edits = Vec::new();
        for &id in &self.outputs[..cut] {
            if !verbatim.contains(&id) {
                continue;
            }
            if let Some(m) = masked(history, id)
                && let Ok(entry) = history.recall(id)
            {
                let form = Form::Capped(Box::new(m));
                let (tokens, _) = form.cost(&entry, history.counter());
                edits.push(Edit::Reform { id, form, tokens });
            }
        }
        apply_baseline(history, edits)
    }
}

#[cfg(test)]
mod tests;
