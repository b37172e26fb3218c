//! The ledger: what each call site appended, what became of it, and what it cost.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use crate::history::History;
use crate::history::view::{Compaction, Edit};
use crate::model::entry::{Entry, EntryId, EntryKind};
use crate::model::message::{Arguments, Role};
use crate::model::retention::Retention;
use crate::model::site::CallSite;
use crate::sent::Form;
use crate::tools::recall::{RecallTool, parse_id};

use super::regret::{Fate, RegretEvent, RegretKind, call_key};
use super::site_stats::{SiteStats, site_key, sort_sites};
use super::timeline::{Band, Timeline};

#[derive(Debug, Clone)]
struct EntryState {
    site: usize,
    location: CallSite,
    class: Retention,
    tokens: u32,
    fate: Fate,
}

#[derive(Debug, Clone)]
struct Call {
    tool: String,
    key: String,
    recall: Option<EntryId>,
}

/// A per-call-site ledger of a history, kept up to date by [`observe`](Ledger::observe):
/// for each site (and class) the entries and tokens it appended, the tokens still in the
/// view, each entry's fate by tier, and the regret events found as they happen.
///
/// Regret is detected from the history itself, so it works on a live history as well as
/// on one reopened from JSON or a journal:
///
/// - a call of the [`RecallTool`] for an entry whose content had left the view;
/// - a tool call repeated with the same tool and arguments (for shell tools, the same
///   command; see [`call_key`]) after every earlier result of it had left the view.
///
/// Each event is kept, counted for the site that classified the evicted entry, and
/// emitted as a `tracing` event on target [`REGRET_TARGET`](super::REGRET_TARGET).
///
/// ```
/// use favur_context::audit::{Fate, Ledger, RegretKind};
/// use favur_context::compact::{Compaction, Edit};
/// use favur_context::{forgettable, strict, History};
/// use serde_json::json;
///
/// let mut history = History::new();
/// let mut ledger = Ledger::new();
/// history.append(strict!(user: "fix the build"));
/// history.append(strict!(tool_call: "c1", "bash", json!({"command": "cargo build"})));
/// let first = history.append(forgettable!(tool_result("c1"): "error[E0308]: mismatched types"));
/// ledger.observe(&history);
/// let two = std::num::NonZeroU8::new(2).unwrap();
/// history.apply(Compaction { tier: two, edits: vec![Edit::Drop { id: first }], usage_after: None }).unwrap();
/// ledger.observe(&history);
/// history.append(strict!(tool_call: "c2", "bash", json!({"command": "cargo  build"})));
/// history.append(forgettable!(tool_result("c2"): "error[E0308]: mismatched types"));
/// let found = ledger.observe(&history);
/// assert_eq!(found.len(), 1);
/// assert!(matches!(found[0].kind, RegretKind::RepeatedCall { .. }));
/// assert_eq!((found[0].evicted, found[0].fate), (first, Fate::Dropped { tier: two }));
/// assert_eq!(found[0].site, *history.recall(first).unwrap().site());
/// let site = &ledger.sites()[0];
/// assert_eq!((site.regrets, site.entries, site.dropped[&two]), (1, 1, 1));
/// ```
///
/// Call `observe` after each append and after each compaction (it reads only what is
/// new: O(new entries and compactions)); then the order of events is exact. A history
/// does not record when a compaction happened relative to the appends, so when several
/// happened between two calls (or a whole reopened history is observed at once) a
/// compaction that wrote summaries is placed just before its first summary's id, and one
/// that only dropped or reshaped entries as late as the records allow (before the next
/// compaction that wrote summaries, or after the last entry). Placing it late can only
/// miss regrets, never invent one: observed at once, a history gives a subset of the
/// events that observing it live gives. Originals a [`JournaledHistory`](crate::journal::JournaledHistory) evicted from memory
/// before they were observed are counted in [`unseen`](Ledger::unseen) and nowhere else;
/// observe a reopened journal through a history holding every original
/// ([`History::from_journal`]).
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    next: u64,
    compactions_seen: usize,
    unseen: u64,
    sites: Vec<(String, Retention)>,
    site_index: HashMap<(String, Retention), usize>,
    states: HashMap<EntryId, EntryState>,
    summaries: HashMap<EntryId, Vec<EntryId>>,
    in_view: HashMap<EntryId, u32>,
    calls: HashMap<String, Call>,
    results_by_call: HashMap<String, Vec<EntryId>>,
    checked: HashSet<EntryId>,
    events: Vec<RegretEvent>,
    event_sites: Vec<usize>,
    timeline: Timeline,
}

impl Ledger {
    /// An empty ledger, having seen nothing.
    pub fn new() -> Self {
        Ledger::default()
    }

    /// The ledger of a whole history at once (a reopened one, say).
    ///
    /// ```
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// h.append(fuzzy!(user: "hello"));
    /// let ledger = favur_context::audit::Ledger::of(&h);
    /// assert_eq!(ledger.sites()[0].entries, 1);
    /// assert_eq!(ledger.sites()[0].kept, 1);
    /// ```
    pub fn of(history: &History) -> Ledger {
        let mut ledger = Ledger::new();
        ledger.observe(history);
        ledger
    }

    /// Reads what is new in `history` since the last call (entries and compactions),
    /// updates the figures, and returns the regret events found by this call (also kept
    /// in [`regrets`](Ledger::regrets) and emitted as tracing events). Call it with the
    /// same history every time.
    ///
    /// See [`Ledger`] for an example.
    pub fn observe(&mut self, history: &History) -> &[RegretEvent] {
        self.observe_prefix(history, history.next_id(), history.compactions().len())
    }

    /// Like [`observe`](Ledger::observe), but reads `history` as it stood when its next
    /// id was `next` and it had applied its first `compactions` compactions: entries with
    /// ids below `next` and those compactions. For replaying a record whose order is
    /// known (a journal, see [`of_journal`](Ledger::of_journal)) exactly. Entries not yet
    /// held count as unseen only once `next` passes them.
    ///
    /// ```
    /// use favur_context::audit::Ledger;
    /// use favur_context::{fuzzy, EntryId, History};
    /// let mut h = History::new();
    /// h.append(fuzzy!(user: "a"));
    /// h.append(fuzzy!(user: "b"));
    /// let mut ledger = Ledger::new();
    /// ledger.observe_prefix(&h, EntryId(1), 0);
    /// assert_eq!(ledger.sites()[0].entries, 1);
    /// ledger.observe(&h);
    /// assert_eq!(ledger.sites().iter().map(|s| s.entries).sum::<u64>(), 2);
    /// ```
    pub fn observe_prefix(
        &mut self,
        history: &History,
        next: EntryId,
        compactions: usize,
    ) -> &[RegretEvent] {
        let before = self.events.len();
        let next = next.0.min(history.next_id().0);
        let entries = history.entries();
        let start = entries.partition_point(|e| e.id.0 < self.next);
        let end = entries.partition_point(|e| e.id.0 < next).max(start);
        let mut pending = entries[start..end].iter().peekable();
        let all = history.compactions();
        let upto = compactions.min(all.len());
        let new = all
            .get(self.compactions_seen.min(upto)..upto)
            .unwrap_or(&[]);
        for (c, at) in new.iter().zip(positions(new, self.next)) {
            while let Some(e) = pending.next_if(|e| at.is_none_or(|at| e.id.0 < at)) {
                self.entry(e);
            }
            self.compaction(history, c);
        }
        self.compactions_seen = self.compactions_seen.max(upto);
        for e in pending {
            self.entry(e);
        }
        if next > self.next {
            self.unseen += next - self.next;
            self.next = next;
        }
        &self.events[before..]
    }

    /// Tells the ledger that the observed entry `result` answers a call of `tool` with
    /// `arguments`, for agents whose calls are not tool-call parts (a plain-chat agent
    /// running the command found in its text). Runs the same checks as a tool result
    /// answering a recorded call (a repeated call, a recall); does nothing for an entry
    /// already checked that way or not observed. Returns the regret event found, if any.
    ///
    /// ```
    /// use favur_context::audit::Ledger;
    /// use favur_context::compact::{Compaction, Edit};
    /// use favur_context::message::Arguments;
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// let mut ledger = Ledger::new();
    /// let ls = Arguments::parse(r#"{"command": "ls"}"#);
    /// let first = h.append(fuzzy!(user: "a.rs b.rs"));
    /// ledger.observe(&h);
    /// assert!(ledger.note_call(first, "bash", &ls).is_none());
    /// h.apply(Compaction { tier: std::num::NonZeroU8::new(2).unwrap(), edits: vec![Edit::Drop { id: first }], usage_after: None }).unwrap();
    /// ledger.observe(&h);
    /// let again = h.append(fuzzy!(user: "a.rs b.rs"));
    /// ledger.observe(&h);
    /// assert_eq!(ledger.note_call(again, "bash", &ls).unwrap().evicted, first);
    /// ```
    pub fn note_call(
        &mut self,
        result: EntryId,
        tool: &str,
        arguments: &Arguments,
    ) -> Option<&RegretEvent> {
        if self.checked.contains(&result) || !self.states.contains_key(&result) {
            return None;
        }
        let call = call_of(tool, arguments);
        let before = self.events.len();
        self.on_result(result, &call);
        self.events.get(before)
    }

    /// Records a reference lost by a replay: the assistant message `at` used
    /// `identifiers` that, at the time, appeared only in `source`, whose content had left
    /// the view. Returns the event, or `None` if `source` was not observed or is still in
    /// the view.
    ///
    /// ```
    /// use favur_context::audit::{Ledger, RegretKind};
    /// use favur_context::compact::{Compaction, Edit};
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// let src = h.append(fuzzy!(user: "see src/parse.rs"));
    /// h.apply(Compaction { tier: std::num::NonZeroU8::new(3).unwrap(), edits: vec![Edit::Drop { id: src }], usage_after: None }).unwrap();
    /// let at = h.append(fuzzy!(assistant: "opening src/parse.rs"));
    /// let mut ledger = Ledger::of(&h);
    /// let e = ledger.record_lost_reference(src, vec!["src/parse.rs".into()], at).unwrap();
    /// assert!(matches!(&e.kind, RegretKind::LostReference { identifiers } if identifiers.len() == 1));
    /// assert!(ledger.record_lost_reference(at, vec!["x".into()], at).is_none()); // still in view
    /// ```
    pub fn record_lost_reference(
        &mut self,
        source: EntryId,
        identifiers: Vec<String>,
        at: EntryId,
    ) -> Option<&RegretEvent> {
        let state = self.states.get(&source)?;
        if state.fate.in_view() {
            return None;
        }
        let cost = u64::from(state.tokens);
        self.push(RegretKind::LostReference { identifiers }, source, cost, at);
        self.events.last()
    }

    /// Every regret event so far, in the order found.
    ///
    /// See [`Ledger`] for an example.
    pub fn regrets(&self) -> &[RegretEvent] {
        &self.events
    }

    /// The fate of an observed entry appended or pinned by a call site.
    ///
    /// ```
    /// use favur_context::audit::{Fate, Ledger};
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// let id = h.append(fuzzy!(user: "x"));
    /// assert_eq!(Ledger::of(&h).fate(id), Some(Fate::Kept));
    /// ```
    pub fn fate(&self, id: EntryId) -> Option<Fate> {
        self.states.get(&id).map(|s| s.fate)
    }

    /// Entry ids the ledger never saw (evicted from memory before being observed).
    pub fn unseen(&self) -> u64 {
        self.unseen
    }

    /// What the ledger saw over time: the tokens of every request by band, every
    /// compaction's tier, and the items of any request (see [`Timeline`]). A request is
    /// counted at each appended assistant entry: the view as it stood just before it.
    ///
    /// ```
    /// use favur_context::audit::Ledger;
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// h.append(fuzzy!(user: "hi"));
    /// h.append(fuzzy!(assistant: "hello"));
    /// assert_eq!(Ledger::of(&h).timeline().requests().len(), 1);
    /// ```
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// The figures of every site, most regret first (then most regret tokens, then by
    /// site).
    ///
    /// See [`Ledger`] for an example.
    pub fn sites(&self) -> Vec<SiteStats> {
        let mut out: Vec<SiteStats> = self
            .sites
            .iter()
            .map(|(site, class)| SiteStats::new(site.clone(), *class))
            .collect();
        for (id, st) in &self.states {
            let s = &mut out[st.site];
            s.entries += 1;
            s.tokens += u64::from(st.tokens);
            s.tokens_in_view += u64::from(self.in_view.get(id).copied().unwrap_or(0));
            match st.fate {
                Fate::Kept => s.kept += 1,
                Fate::Summarized { tier } => *s.summarized.entry(tier).or_default() += 1,
                Fate::Dropped { tier } => *s.dropped.entry(tier).or_default() += 1,
            }
        }
        for (e, site) in self.events.iter().zip(&self.event_sites) {
            let s = &mut out[*site];
            s.regrets += 1;
            s.regret_tokens += e.cost_tokens;
            *s.regret_kinds.entry(e.kind.label().to_owned()).or_default() += 1;
        }
        sort_sites(&mut out);
        out
    }

    fn entry(&mut self, e: &Entry) {
        if e.id.0 < self.next {
            return;
        }
        self.unseen += e.id.0 - self.next;
        self.next = e.id.0 + 1;
        if let EntryKind::Summary { replaces } = &*e.kind {
            self.summaries.insert(e.id, replaces.clone());
            return;
        }
        if e.message.role == Role::Assistant && e.kind == EntryKind::Appended {
            self.timeline.request(e.id);
        }
        let band = Band::of(e.retention, e.kind == EntryKind::Pinned);
        self.timeline.enter(e.id, band, e.tokens, e.id.0, e.id.0);
        let key = (site_key(&e.site), e.retention);
        let site = match self.site_index.get(&key) {
            Some(i) => *i,
            None => {
                self.sites.push(key.clone());
                self.site_index.insert(key, self.sites.len() - 1);
                self.sites.len() - 1
            }
        };
        self.states.insert(
            e.id,
            EntryState {
                site,
                location: e.site().clone(),
                class: e.retention,
                tokens: e.tokens,
                fate: Fate::Kept,
            },
        );
        self.in_view.insert(e.id, e.tokens);
        for call in e.message.tool_calls() {
            self.calls
                .insert(call.id.clone(), call_of(&call.name, &call.arguments));
        }
        for result in e.message.tool_results() {
            if let Some(call) = self.calls.get(&result.call_id).cloned() {
                self.on_result(e.id, &call);
            }
        }
    }

    fn on_result(&mut self, result: EntryId, call: &Call) {
        self.checked.insert(result);
        let cost = self.states.get(&result).map_or(0, |s| u64::from(s.tokens));
        if let Some(target) = call.recall {
            if self.states.get(&target).is_some_and(|s| !s.fate.in_view()) {
                self.push(RegretKind::Recall, target, cost, result);
            }
            return;
        }
        let earlier = self.results_by_call.entry(call.key.clone()).or_default();
        let known: Vec<EntryId> = earlier
            .iter()
            .copied()
            .filter(|id| *id != result && self.states.contains_key(id))
            .collect();
        earlier.push(result);
        let all_left = !known.is_empty()
            && known
                .iter()
                .all(|id| self.states.get(id).is_some_and(|s| !s.fate.in_view()));
        if let (true, Some(last)) = (all_left, known.last()) {
            let kind = RegretKind::RepeatedCall {
                tool: call.tool.clone(),
                call: call.key.clone(),
            };
            self.push(kind, *last, cost, result);
        }
    }

    fn push(&mut self, kind: RegretKind, evicted: EntryId, cost_tokens: u64, at: EntryId) {
        let Some(st) = self.states.get(&evicted) else {
            return;
        };
        let event = RegretEvent {
            kind,
            evicted,
            site: st.location.clone(),
            class: st.class,
            fate: st.fate,
            cost_tokens,
            at,
        };
        event.emit();
        self.event_sites.push(st.site);
        self.events.push(event);
    }

    fn compaction(&mut self, history: &History, c: &Compaction) {
        let tier = c.tier;
        self.timeline.mark(self.next, tier);
        let reformed: HashSet<EntryId> = c
            .edits
            .iter()
            .filter_map(|e| match e {
                Edit::Reform { id, .. } => Some(*id),
                _ => None,
            })
            .collect();
        for edit in &c.edits {
            match edit {
                Edit::Drop { id } => self.leave(*id, Fate::Dropped { tier }),
                Edit::Summarize { summary } => {
                    // The history's records name their summaries by id: it holds them.
                    let Some(summary) = summary
                        .entry()
                        .map(Cow::Borrowed)
                        .or_else(|| history.recall(summary.id()).ok())
                    else {
                        continue;
                    };
                    if let EntryKind::Summary { replaces } = &*summary.kind {
                        let position = replaces
                            .iter()
                            .filter_map(|r| self.timeline.position(*r))
                            .min()
                            .unwrap_or(summary.id.0);
                        self.timeline.enter(
                            summary.id,
                            Band::Summary,
                            summary.tokens,
                            position,
                            self.next,
                        );
                        self.summaries.insert(summary.id, replaces.clone());
                        for r in replaces.iter().filter(|r| !reformed.contains(r)) {
                            self.leave(*r, Fate::Summarized { tier });
                        }
                    }
                }
                Edit::Reform { id, form, tokens } => {
                    if let Some(t) = self.in_view.get_mut(id) {
                        *t = *tokens;
                    }
                    self.timeline.retoken(*id, *tokens);
                    if let Form::Placeholder { summary } = form {
                        let fate = match summary {
                            Some(_) => Fate::Summarized { tier },
                            None => Fate::Dropped { tier },
                        };
                        self.set_fate(*id, fate);
                    }
                }
            }
        }
    }

    /// An entry (or a summary, and with it what it replaces) leaves the view.
    fn leave(&mut self, id: EntryId, fate: Fate) {
        self.in_view.remove(&id);
        self.timeline.leave(id, self.next);
        self.set_fate(id, fate);
        if let (Some(replaced), Fate::Dropped { .. }) = (self.summaries.get(&id), fate) {
            // What a dropped summary stood for is now dropped too, at that tier.
            let mut stack = replaced.clone();
            while let Some(r) = stack.pop() {
                if let Some(st) = self.states.get_mut(&r)
                    && matches!(st.fate, Fate::Summarized { .. })
                {
                    st.fate = fate;
                }
                if let Some(more) = self.summaries.get(&r) {
                    stack.extend_from_slice(more);
                }
            }
        }
    }

    fn set_fate(&mut self, id: EntryId, fate: Fate) {
        if let Some(st) = self.states.get_mut(&id)
            && (st.fate.in_view() || matches!(fate, Fate::Dropped { .. }))
        {
            st.fate = fate;
        }
    }
}

fn call_of(tool: &str, arguments: &Arguments) -> Call {
    Call {
        tool: tool.to_owned(),
        key: call_key(tool, arguments),
        recall: (tool == RecallTool.name())
            .then(|| parse_id(arguments).ok())
            .flatten(),
    }
}

#[cfg(test)]
mod tests;

/// Where each compaction falls among the entry ids: a compaction that wrote summaries
/// just before its first summary's id; one that did not, as late as the records allow
/// (just before the next compaction that wrote summaries, or after every entry: `None`);
/// never before `floor` nor before the previous one.
fn positions(compactions: &[Compaction], floor: u64) -> Vec<Option<u64>> {
    let mut out = vec![None; compactions.len()];
    let mut bound: Option<u64> = None;
    for (c, at) in compactions.iter().zip(out.iter_mut()).rev() {
        let first_summary = c
            .edits
            .iter()
            .filter_map(|e| match e {
                Edit::Summarize { summary } => Some(summary.id().0),
                _ => None,
            })
            .min();
        *at = match (first_summary, bound) {
            (Some(first), Some(bound)) => Some(first.min(bound)),
            (first, bound) => first.or(bound),
        };
        bound = *at;
    }
    // Once a position is "after every entry", so are the ones after it.
    let mut low = floor;
    for at in out.iter_mut().flatten() {
        *at = (*at).max(low);
        low = *at;
    }
    out
}
