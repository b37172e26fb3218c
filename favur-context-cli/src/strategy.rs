//! What runs before each model request: the policy under test, or a baseline.

use favur_context::{Compaction, Edit, Form, History, Role};

use crate::ReplayError;

/// What a strategy did before one request.
///
/// ```
/// use favur_context_cli::strategy::Event;
/// let e = Event { tier: 1, summarizer_calls: 2, fallbacks: 0 };
/// assert_eq!(e.tier, 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// The tier that fired (0 for a baseline's trim or mask).
    pub tier: u8,
    /// Summarizer calls made.
    pub summarizer_calls: u32,
    /// Summarizer failures that fell back to the built-in summarizer.
    pub fallbacks: u32,
}

/// Something that shapes the view before each model request: the compaction policy
/// under test or a baseline.
///
/// ```
/// use favur_context_cli::strategy::{NoCompaction, Strategy};
/// let mut s = NoCompaction;
/// let mut h = favur_context::History::new();
/// assert_eq!(s.before_request(&mut h).unwrap(), None);
/// ```
pub trait Strategy {
    /// A short label for reports ("policy", "trim-oldest(budget 12000)").
    fn label(&self) -> String;
    /// Called before each request, with the history as it stands; may compact it.
    fn before_request(&mut self, history: &mut History) -> Result<Option<Event>, ReplayError>;
    /// Tier thresholds as fractions of the window, for charts (none for baselines).
    fn thresholds(&self) -> Vec<f64> {
        Vec::new()
    }
}

/// The baseline that never compacts.
///
/// ```
/// use favur_context_cli::strategy::{NoCompaction, Strategy};
/// assert_eq!(NoCompaction.label(), "no compaction");
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCompaction;

impl Strategy for NoCompaction {
    fn label(&self) -> String {
        "no compaction".to_owned()
    }
    fn before_request(&mut self, _history: &mut History) -> Result<Option<Event>, ReplayError> {
        Ok(None)
    }
}

/// The index in the view where the in-flight tail starts: everything after the last
/// assistant entry (which the model has not answered yet).
fn tail_start(history: &History) -> usize {
    let items = history.view().items();
    items
        .iter()
        .rposition(|item| {
            history
                .entry(item.id)
                .is_some_and(|e| e.message().role == Role::Assistant)
        })
        .map_or(0, |i| i + 1)
}

/// The baseline that drops the oldest messages until the request fits `budget` tokens,
/// on every request. An assistant turn and the tool results that follow it go together,
/// so no call or result is orphaned; pinned entries and the in-flight tail stay.
///
/// ```
/// use favur_context::{fuzzy, History};
/// use favur_context_cli::strategy::{Strategy, TrimOldest};
/// let mut h = History::new();
/// h.append(fuzzy!(user: "{}", "word ".repeat(100)));
/// h.append(fuzzy!(assistant: "ok"));
/// h.append(fuzzy!(user: "next"));
/// let mut trim = TrimOldest { budget: 20 };
/// assert!(trim.before_request(&mut h).unwrap().is_some());
/// assert!(h.usage_tokens() <= 20);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct TrimOldest {
    /// The most tokens a request may carry.
    pub budget: u64,
}

impl Strategy for TrimOldest {
    fn label(&self) -> String {
        format!("trim-oldest (budget {})", self.budget)
    }

    fn before_request(&mut self, history: &mut History) -> Result<Option<Event>, ReplayError> {
        let mut usage = history.usage_tokens();
        if usage <= self.budget {
            return Ok(None);
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
                    .entry(items[j].id)
                    .is_some_and(|e| e.message().role == Role::Tool)
            {
                j += 1;
            }
            for item in &items[i..j] {
                usage = usage.saturating_sub(u64::from(item.tokens) + framing);
                edits.push(Edit::Drop { id: item.id });
            }
            i = j;
        }
        if edits.is_empty() {
            return Ok(None);
        }
        history.apply(Compaction { tier: 0, edits })?;
        Ok(Some(Event {
            tier: 0,
            summarizer_calls: 0,
            fallbacks: 0,
        }))
    }
}

/// Tokens a masked tool output costs in the view.
pub const MASK_PLACEHOLDER_TOKENS: u32 = 12;

/// The baseline that replaces every tool output but the last `keep` with a short
/// placeholder (the call stays, so the pairing stays valid).
///
/// ```
/// use favur_context::{fuzzy, History, Message, ToolCall, Retention};
/// use favur_context_cli::strategy::{MaskOld, Strategy};
/// let mut h = History::new();
/// for i in 0..3 {
///     h.append(Message::assistant_calls(vec![ToolCall::new(format!("c{i}"), "bash", "{}")]).classify(Retention::Fuzzy));
///     h.append(Message::tool_result(format!("c{i}"), "x ".repeat(200), false).classify(Retention::Fuzzy));
/// }
/// let before = h.usage_tokens();
/// MaskOld { keep: 1 }.before_request(&mut h).unwrap();
/// assert!(h.usage_tokens() < before);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct MaskOld {
    /// How many of the newest tool outputs stay verbatim.
    pub keep: usize,
}

impl Strategy for MaskOld {
    fn label(&self) -> String {
        format!("mask-old (last {})", self.keep)
    }

    fn before_request(&mut self, history: &mut History) -> Result<Option<Event>, ReplayError> {
        let tail = tail_start(history);
        let items = history.view().items();
        let outputs: Vec<usize> = items
            .iter()
            .enumerate()
            .filter(|(_, item)| {
                history
                    .entry(item.id)
                    .is_some_and(|e| e.message().role == Role::Tool)
            })
            .map(|(i, _)| i)
            .collect();
        let cut = outputs.len().saturating_sub(self.keep);
        let edits: Vec<Edit> = outputs[..cut]
            .iter()
            .filter(|&&i| i < tail && items[i].form == Form::Verbatim)
            .map(|&i| Edit::Reform {
                id: items[i].id,
                form: Form::Placeholder { summary: None },
                tokens: MASK_PLACEHOLDER_TOKENS,
            })
            .collect();
        if edits.is_empty() {
            return Ok(None);
        }
        history.apply(Compaction { tier: 0, edits })?;
        Ok(Some(Event {
            tier: 0,
            summarizer_calls: 0,
            fallbacks: 0,
        }))
    }
}
