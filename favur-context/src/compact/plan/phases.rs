//! The phases of [`Plan::new`](crate::compact::Plan::new), in the order they run: the compactable
//! prefix, each item's fate by class, tool pairing, the forms of items that stay, the
//! summary runs, and the edits with their figures.

use std::collections::HashMap;

use crate::compact::policy::{Action, Policy, Tier};
use crate::history::History;
use crate::history::view::ViewItem;
use crate::model::entry::{Entry, EntryId};
use crate::model::message::{Part, Role};
use crate::model::retention::Retention;
use crate::sent::{self, Form, StayForm, Staying};
use crate::tokens::counter::TokenCounter;

use super::{PlannedReform, Run, summary_budget};

/// What becomes of one view item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fate {
    /// Stays as it is (the cap may still shorten it).
    Keep,
    /// Content goes into a summary; leaves the view.
    Summarize,
    /// Leaves the view.
    Drop,
    /// Content goes into a summary; stays in a reduced form.
    SummarizeStay,
    /// Content leaves; stays in a reduced form.
    DropStay,
}

impl Fate {
    /// The fate of an item that must stay: its content still goes, the item stays.
    fn staying(self) -> Fate {
        match self {
            Fate::Summarize => Fate::SummarizeStay,
            Fate::Drop => Fate::DropStay,
            other => other,
        }
    }

    fn leaves(self) -> bool {
        matches!(self, Fate::Summarize | Fate::Drop)
    }
}

/// Call ids to their group: foldhash, the crate's one fast hasher.
type FxMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let p = parent[i as usize];
        parent[i as usize] = parent[p as usize];
        i = p;
    }
    i
}

fn is_consumer(item: &ViewItem) -> bool {
    item.shape.role == Role::Assistant && !item.shape.summary
}

fn is_exchange_part(item: &ViewItem) -> bool {
    matches!(item.shape.role, Role::Assistant | Role::Tool)
}

/// What every phase reads.
#[derive(Clone, Copy)]
pub(super) struct Planner<'h> {
    pub(super) history: &'h History,
    pub(super) items: &'h [ViewItem],
    pub(super) policy: &'h Policy,
    pub(super) counter: &'h dyn TokenCounter,
    /// Framing tokens of one content block.
    pub(super) framing: u64,
    /// What a summary block costs beyond its text: with no id range, and per range
    /// (counted once, with the widest ids, so the estimate is never short).
    pub(super) frame: (u64, u64),
    /// The tokens a summary of strict material is given per entry it merges (the
    /// policy's, or more where the room allows: see `plan::grown`).
    pub(super) strict_per_entry: u32,
}

impl<'h> Planner<'h> {
    /// The tokens `run`'s summary is given per entry it merges: a summary of strict
    /// material may have more (exact text matters there), others have the policy's.
    pub(super) fn per_entry(&self, run: &Run) -> u32 {
        match run.retention {
            Retention::Strict => self.strict_per_entry,
            _ => self.policy.summary_tokens_per_entry(),
        }
    }

    /// By id, not by index: a journaled history holds only the originals still in the
    /// view (and pinned ones), so an entry's index need not be its id.
    pub(super) fn entry(&self, i: usize) -> Option<&'h Entry> {
        self.history.entry(self.items[i].id)
    }

    /// What item `i` costs now, framing included.
    pub(super) fn now(&self, i: usize) -> u64 {
        u64::from(self.items[i].tokens) + self.framing * u64::from(self.items[i].blocks)
    }
}

/// Phase 1, the prefix: the compactable items are those before the newest assistant
/// entry, less the last `keep_recent` exchanges. Returns the index past the last one.
pub(super) fn prefix(items: &[ViewItem], keep_recent: usize) -> usize {
    let boundary = items.iter().rposition(is_consumer).unwrap_or(0);
    let mut end = boundary;
    let mut left = keep_recent;
    while left > 0 && end > 0 {
        end -= 1;
        if is_consumer(&items[end]) {
            left -= 1;
        }
    }
    if left > 0 { 0 } else { end }
}

/// Phase 2, the fates: the action each item gets by its class alone, from what the view
/// item holds of its entry (no entry is read). A summary, or an item already reduced, is
/// not summarized again.
pub(super) fn fates(items: &[ViewItem], end: usize, row: &Tier) -> Vec<Fate> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| fate_of(item, i < end, row))
        .collect()
}

/// The action item `item` gets by its class alone (`compactable`: before the prefix's
/// end).
pub(super) fn fate_of(item: &ViewItem, compactable: bool, row: &Tier) -> Fate {
    if !compactable || item.shape.pinned {
        // The in-flight tail, and pinned entries: fixed points, shown verbatim.
        return Fate::Keep;
    }
    let reduced = matches!(
        item.form,
        Form::CallsOnly | Form::Placeholder { .. } | Form::Command
    );
    match (
        row.action(item.shape.retention),
        item.shape.summary || reduced,
    ) {
        (Action::Keep, _) | (Action::Summarize, true) => Fate::Keep,
        (Action::Summarize, false) => Fate::Summarize,
        (Action::Drop, _) => Fate::Drop,
    }
}

/// Phase 3, tool pairing: a call and its results stay or leave together. Paired exchange
/// by exchange (an assistant entry and the entries after it up to the next assistant
/// entry): the tool entries of an exchange answer the calls of its assistant entry, as
/// every provider requires. Where every assistant and tool entry of an exchange stays, or
/// every one leaves, there is nothing to pair and no message is read; otherwise the
/// group stays, reduced where compacted.
pub(super) fn pairing(p: &Planner<'_>, fate: &mut [Fate]) {
    let items = p.items;
    let n = items.len();
    let mut calls: FxMap<&str, u32> = FxMap::default();
    let mut parent: Vec<u32> = Vec::new();
    let mut start = 0usize;
    while start < n {
        let mut stop = start + 1;
        while stop < n && items[stop].shape.role != Role::Assistant {
            stop += 1;
        }
        let (mut keeps, mut leaves) = (false, false);
        for i in start..stop {
            if is_exchange_part(&items[i]) {
                if fate[i] == Fate::Keep {
                    keeps = true;
                } else {
                    leaves = true;
                }
            }
        }
        if stop > start + 1 {
            keep_command(p, fate, start);
        }
        if keeps && leaves {
            if calls_first(p, start, stop) {
                // The usual shape: the exchange's tool entries answer its assistant
                // entry's calls, so they all form one group; one keeps, all stay.
                for i in start..stop {
                    if is_exchange_part(&items[i]) {
                        fate[i] = fate[i].staying();
                    }
                }
            } else {
                link_by_id(p, fate, start, stop, &mut calls, &mut parent);
            }
        }
        start = stop;
    }
}

/// Plain chat (an assistant turn writes a fenced command, the next user message is its
/// observation): an observation that stays keeps its command. The assistant turn at
/// `start` stays, reduced to its command, while the observation after it is kept.
fn keep_command(p: &Planner<'_>, fate: &mut [Fate], start: usize) {
    let (turn, next) = (&p.items[start], &p.items[start + 1]);
    if turn.shape.role == Role::Assistant
        && !turn.shape.summary
        && fate[start].leaves()
        && next.shape.role == Role::User
        && !next.shape.summary
        && fate[start + 1] == Fate::Keep
        && turn.shape.command
        && p.entry(start).is_some()
    {
        fate[start] = fate[start].staying();
    }
}

/// Whether the exchange from `start` opens with an assistant entry making calls.
fn calls_first(p: &Planner<'_>, start: usize, stop: usize) -> bool {
    let first = &p.items[start];
    first.shape.role == Role::Assistant
        && match first.shape.parts {
            0 => false,
            // One part and tool entries after it: a lone call (not read, to keep planning
            // free of cache misses; keeping a lone text is harmless).
            1 => (start + 1..stop).any(|i| p.items[i].shape.role == Role::Tool),
            _ => p
                .entry(start)
                .is_some_and(|e| e.message.tool_calls().next().is_some()),
        }
}

/// Results after an assistant entry without calls: link calls and results by id; a group
/// with one item kept stays whole.
fn link_by_id<'h>(
    p: &Planner<'h>,
    fate: &mut [Fate],
    start: usize,
    stop: usize,
    calls: &mut FxMap<&'h str, u32>,
    parent: &mut Vec<u32>,
) {
    let len = stop - start;
    parent.clear();
    parent.extend(0..len as u32);
    calls.clear();
    for local in 0..len {
        let Some(e) = p.entry(start + local) else {
            continue;
        };
        for part in &e.message.parts {
            match part {
                Part::ToolCall(c) => {
                    calls.insert(c.id.as_str(), local as u32);
                }
                Part::ToolResult(r) => {
                    if let Some(&j) = calls.get(r.call_id.as_str()) {
                        let a = find(parent, local as u32);
                        let b = find(parent, j);
                        if a != b {
                            parent[a as usize] = b;
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let mut stays = vec![false; len];
    for local in 0..len {
        if fate[start + local] == Fate::Keep {
            let r = find(parent, local as u32);
            stays[r as usize] = true;
        }
    }
    for local in 0..len {
        let r = find(parent, local as u32);
        if stays[r as usize] {
            fate[start + local] = fate[start + local].staying();
        }
    }
}

/// Phase 4, the forms: what each staying item looks like and costs. A reduction that
/// changes nothing, or would cost at least what the item costs now, is a keep:
/// compaction never makes an entry bigger.
pub(super) fn forms(p: &Planner<'_>, fate: &mut [Fate]) -> Vec<Option<Staying>> {
    let items = p.items;
    let mut staying = vec![None; items.len()];
    for i in 0..items.len() {
        if !matches!(fate[i], Fate::SummarizeStay | Fate::DropStay) {
            continue;
        }
        let tool_next = items.get(i + 1).is_some_and(|n| n.shape.role == Role::Tool);
        if items[i].shape.role == Role::Assistant && items[i].shape.parts == 1 && tool_next {
            // A lone call: calls-only would show the same; keep it, unread.
            fate[i] = Fate::Keep;
            continue;
        }
        // Counted once per item and form: the view remembers it across plans.
        let s = match p.entry(i) {
            Some(e) => p
                .history
                .view()
                .staying(i, || stay_form(p, e, &items[i].form)),
            None => None,
        };
        match s {
            Some(s) if u64::from(s.tokens) + p.framing * u64::from(s.blocks) < p.now(i) => {
                staying[i] = Some(s);
            }
            _ => fate[i] = Fate::Keep,
        }
    }
    staying
}

/// The reduced form of a staying entry shown now in `current`, if one shows less.
fn stay_form(p: &Planner<'_>, e: &Entry, current: &Form) -> Option<Staying> {
    let has_calls = e.message.tool_calls().next().is_some();
    let has_results = e.message.tool_results().next().is_some();
    // What calls-only leaves out (it keeps the calls and their reasoning).
    let has_other = e
        .message
        .parts
        .iter()
        .any(|p| matches!(p, Part::Text(_) | Part::Image(_) | Part::Document(_)));
    let (form, shown) = match (has_calls, has_results) {
        (false, false)
            if e.message.role == Role::Assistant
                && !matches!(current, Form::Command)
                && sent::has_command(&e.message) =>
        {
            (StayForm::Command, Form::Command)
        }
        (true, false) if has_other && *current != Form::CallsOnly => {
            (StayForm::CallsOnly, Form::CallsOnly)
        }
        (false, true) if !matches!(current, Form::Placeholder { .. }) => {
            // The summary id is filled in once runs are known; count with the widest id,
            // so that the estimate is never short.
            let widest = Form::Placeholder {
                summary: Some(sent::WIDEST_ID),
            };
            (StayForm::Placeholder, widest)
        }
        _ => return None,
    };
    let (tokens, blocks) = sent::cost(p.counter, e, &shown);
    Some(Staying {
        form,
        tokens,
        blocks,
    })
}

/// The runs of one round: each run with what its members free, and for each item the
/// run it belongs to.
pub(super) struct Runs {
    pub(super) runs: Vec<Run>,
    /// Per run: the usage its members free (framing included).
    pub(super) freed: Vec<u64>,
    /// Per run: the view indices from its first member to past its last.
    pub(super) spans: Vec<(usize, usize)>,
    /// Per item: the index of its run, if it is summarized.
    pub(super) run_of: Vec<Option<usize>>,
}

/// Phase 5, the runs: each contiguous run of summarized items becomes one summary, in
/// place; kept items (and items staying without a summary) close a run, dropped items
/// leaving the view do not. `budget_tokens` holds the members' tokens until
/// [`finish_budgets`] sets it.
pub(super) fn runs(p: &Planner<'_>, fate: &[Fate], staying: &[Option<Staying>]) -> Runs {
    let items = p.items;
    let mut out = Runs {
        runs: Vec::new(),
        freed: Vec::new(),
        spans: Vec::new(),
        run_of: vec![None; items.len()],
    };
    let mut next_summary = p.history.next_id().0;
    let mut open = false;
    for i in 0..items.len() {
        match fate[i] {
            Fate::Summarize | Fate::SummarizeStay => {
                if !open {
                    // Its members: the summarized items up to the next one that stays
                    // (dropped ones in between do not break it).
                    let members = fate[i..]
                        .iter()
                        .take_while(|f| !matches!(f, Fate::Keep | Fate::DropStay))
                        .filter(|f| matches!(f, Fate::Summarize | Fate::SummarizeStay))
                        .count();
                    out.runs.push(Run {
                        summary: EntryId(next_summary),
                        members: Vec::with_capacity(members),
                        retention: Retention::Fuzzy,
                        budget_tokens: 0,
                    });
                    next_summary += 1;
                    out.freed.push(0);
                    out.spans.push((i, i));
                    open = true;
                }
                let k = out.runs.len() - 1;
                let run = &mut out.runs[k];
                run.members.push(items[i].id);
                run.retention = run.retention.max(items[i].shape.retention);
                run.budget_tokens = run.budget_tokens.saturating_add(items[i].tokens);
                out.run_of[i] = Some(k);
                out.spans[k].1 = i + 1;
                out.freed[k] += match staying[i] {
                    Some(s) if fate[i] == Fate::SummarizeStay => p
                        .now(i)
                        .saturating_sub(u64::from(s.tokens) + p.framing * u64::from(s.blocks)),
                    _ => p.now(i),
                };
            }
            Fate::Drop => {}
            Fate::Keep | Fate::DropStay => open = false,
        }
    }
    out
}

/// What the summary of `run` (members' tokens in `budget_tokens`) is expected to cost:
/// its budget, its block (header, preamble, closing tag) and its framing.
pub(super) fn summary_cost(p: &Planner<'_>, run: &Run) -> u64 {
    let ranges = 1 + run
        .members
        .windows(2)
        .filter(|w| w[1].0 != w[0].0 + 1)
        .count() as u64;
    u64::from(summary_budget(
        run.budget_tokens,
        run.members.len(),
        p.per_entry(run),
        p.policy,
    )) + p.frame.0
        + ranges * p.frame.1
        + p.framing
}

/// What the plan adds for the note turn put first when a request starts with an
/// assistant turn: its cost if the plan makes the request start with one, 0 otherwise
/// (a plan that removes the note is not credited for it).
pub(super) fn first_turn_change(p: &Planner<'_>, fate: &[Fate], runs: &Runs) -> u64 {
    let starts_with_assistant = |after: bool| {
        for (i, item) in p.items.iter().enumerate() {
            let stays = !after || !fate[i].leaves() || fate[i] == Fate::Summarize;
            if !stays || item.blocks == 0 {
                continue;
            }
            if after && runs.run_of[i].is_some() && fate[i] == Fate::Summarize {
                return false; // its run's summary (a user turn) comes first
            }
            return item.shape.role == Role::Assistant && !item.shape.summary;
        }
        false
    };
    if !starts_with_assistant(false) && starts_with_assistant(true) {
        u64::from(sent::first_turn_cost(p.counter)) + p.framing
    } else {
        0
    }
}

/// Tokens (framing included) of the view items before the plan's first change: the first
/// item that leaves, is reduced, or is capped.
pub(super) fn unchanged_prefix(p: &Planner<'_>, fate: &[Fate], reforms: &[PlannedReform]) -> u64 {
    let capped: std::collections::HashSet<EntryId> = reforms.iter().map(|r| r.id).collect();
    p.items
        .iter()
        .enumerate()
        .take_while(|(i, item)| fate[*i] == Fate::Keep && !capped.contains(&item.id))
        .map(|(i, _)| p.now(i))
        .sum()
}

/// The items of the runs whose summary would cost at least what their members free:
/// such a run is not worth a summary and is kept as it is.
pub(super) fn unworthy(p: &Planner<'_>, runs: &Runs) -> Vec<usize> {
    let mut newly = Vec::new();
    for (k, run) in runs.runs.iter().enumerate() {
        if summary_cost(p, run) >= runs.freed[k] {
            let (from, to) = runs.spans[k];
            newly.extend((from..to).filter(|&i| runs.run_of[i] == Some(k)));
        }
    }
    newly
}

/// Whether keeping the items `newly` (sorted) changes the pairing: a kept item has a tool
/// partner in its exchange that would still leave the view without it, or is a plain-chat
/// observation whose command turn would leave.
pub(super) fn pairing_changes(items: &[ViewItem], fate: &[Fate], newly: &[usize]) -> bool {
    let n = items.len();
    // Exchange bounds: an assistant entry and the entries up to the next one.
    let mut bounds = vec![(0usize, n); n];
    let mut start = 0;
    for (j, b) in bounds.iter_mut().enumerate() {
        if items[j].shape.role == Role::Assistant {
            start = j;
        }
        b.0 = start;
    }
    let mut stop = n;
    for j in (0..n).rev() {
        bounds[j].1 = stop;
        if items[j].shape.role == Role::Assistant {
            stop = j;
        }
    }
    // Plain chat: a kept observation keeps its command turn (`keep_command`).
    let observed = |i: usize| {
        i > 0
            && items[i].shape.role == Role::User
            && !items[i].shape.summary
            && items[i - 1].shape.role == Role::Assistant
            && items[i - 1].shape.command
            && fate[i - 1].leaves()
    };
    newly.iter().any(|&i| {
        observed(i)
            || is_exchange_part(&items[i])
                && (bounds[i].0..bounds[i].1).any(|j| {
                    j != i
                        && is_exchange_part(&items[j])
                        && fate[j].leaves()
                        && newly.binary_search(&j).is_err()
                })
    })
}

/// Sets each run's budget from its members' tokens.
pub(super) fn finish_budgets(p: &Planner<'_>, runs: &mut [Run]) {
    for run in runs {
        let per_entry = p.per_entry(run);
        run.budget_tokens =
            summary_budget(run.budget_tokens, run.members.len(), per_entry, p.policy);
    }
}
