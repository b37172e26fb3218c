//! The phases of [`Plan::new`](crate::Plan::new), in the order they run: the compactable
//! prefix, each item's fate by class, tool pairing, the forms of items that stay, the
//! summary runs, and the edits with their figures.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::compact::policy::{Action, Policy, Tier};
use crate::history::History;
use crate::history::account::TokenCounter;
use crate::history::view::{Form, ViewItem};
use crate::model::entry::{Entry, EntryId};
use crate::model::message::{Part, Role};
use crate::model::retention::Retention;
use crate::request::forms;

use super::{ByClass, ClassOutcome, MIN_SUMMARY_BUDGET, PlannedReform, Run, summary_budget};

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

/// The reduced form an item that stays is shown in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StayForm {
    /// Only its tool calls ([`Form::CallsOnly`]).
    CallsOnly,
    /// Its results as placeholders ([`Form::Placeholder`]).
    Placeholder,
    /// Only its fenced command blocks ([`Form::Command`]).
    Command,
}

/// An item that stays in a reduced form, and what it costs there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Staying {
    pub(super) form: StayForm,
    /// Tokens in that form (for a placeholder, with the widest summary id).
    pub(super) tokens: u32,
    /// Content blocks in that form.
    pub(super) blocks: u32,
}

#[derive(Default)]
struct Fx(u64);

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
        self.0 = h;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

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
}

impl<'h> Planner<'h> {
    /// By id, not by index: a journaled history holds only the originals still in the
    /// view (and pinned ones), so an entry's index need not be its id.
    fn entry(&self, i: usize) -> Option<&'h Entry> {
        self.history.entry(self.items[i].id)
    }

    /// What item `i` costs now, framing included.
    fn now(&self, i: usize) -> u64 {
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
fn fate_of(item: &ViewItem, compactable: bool, row: &Tier) -> Fate {
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

/// The most a plan of `row` can free, framing included (`framing` per block), read from
/// the view items alone: every item whose class the tier does not keep, or that the
/// per-entry cap may shorten, freed whole, less the least the summaries of the items to
/// summarize cost. No plan frees more: pairing only lets items that would leave stay
/// (reduced), never reduces one that stays, and an item to summarize either stays as it
/// is (its run not worth a summary) or is paid for by its run's summary.
///
/// Runs never span an item the tier keeps. Each stretch between such items whose items
/// to summarize free anything pays, for its runs together, at least `fixed` (one
/// summary's frame, see `summary_cost`) and the smaller of `budget_cap` and the larger
/// of `MIN_SUMMARY_BUDGET` and its members' shares, `min(per_entry, tokens / 4 * 3)`
/// each (see `summary_budget`: both of its terms add up over members, and what it
/// gives several runs adds up to at least what it gives their members together).
pub(super) fn most_freed(
    items: &[ViewItem],
    end: usize,
    row: &Tier,
    framing: u64,
    cap: Option<u32>,
    summaries: SummaryFloor,
) -> u64 {
    let mut whole = 0u64;
    let mut freed = 0u64;
    // The current stretch: what its items to summarize hold, and their shares.
    let (mut held, mut shares) = (0u64, 0u64);
    for (i, item) in items.iter().enumerate() {
        let fate = fate_of(item, i < end, row);
        let capped = cap.is_some_and(|cap| item.tokens > cap);
        if fate == Fate::Keep {
            freed += summaries.net(held, shares);
            (held, shares) = (0, 0);
            if !capped {
                continue;
            }
        }
        let now = u64::from(item.tokens) + framing * u64::from(item.blocks);
        if fate == Fate::Summarize && !capped {
            held += now;
            shares += u64::from(summaries.per_entry.min(item.tokens / 4 * 3));
        } else {
            whole += now;
        }
    }
    whole + freed + summaries.net(held, shares)
}

/// The least summaries cost, as `most_freed` reads it.
#[derive(Debug, Clone, Copy)]
pub(super) struct SummaryFloor {
    /// The policy's summary tokens per member.
    pub(super) per_entry: u32,
    /// The policy's largest summary budget.
    pub(super) budget_cap: u32,
    /// One summary's frame and framing, with one id range.
    pub(super) fixed: u64,
}

impl SummaryFloor {
    /// The most a stretch whose items to summarize hold `held` (framing included), with
    /// `shares` of budget, frees.
    fn net(self, held: u64, shares: u64) -> u64 {
        let budget = shares
            .max(u64::from(MIN_SUMMARY_BUDGET))
            .min(u64::from(self.budget_cap));
        held.saturating_sub(budget + self.fixed)
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
                && forms::has_command(&e.message) =>
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
                summary: Some(EntryId(u64::MAX)),
            };
            (StayForm::Placeholder, widest)
        }
        _ => return None,
    };
    let (tokens, blocks) = forms::cost(p.counter, e, &shown);
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
        u64::from(forms::first_turn_cost(p.counter)) + p.framing
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
pub(super) fn finish_budgets(runs: &mut [Run], policy: &Policy) {
    for run in runs {
        run.budget_tokens = summary_budget(run.budget_tokens, run.members.len(), policy);
    }
}

/// What phase 6 gives.
#[derive(Default)]
pub(super) struct Edits {
    pub(super) reforms: Vec<PlannedReform>,
    pub(super) drops: Vec<EntryId>,
    pub(super) outcome: ByClass<ClassOutcome>,
    /// Tokens freed by reforms and drops and by the members of runs (framing included),
    /// before the summaries' cost is taken off.
    pub(super) freed: u64,
}

/// Shows item `i` (entry `e`) in `form` from now on: the reform, and what it frees.
/// `known`: what the form costs, if already counted.
fn reform(
    (freed, reforms): (&mut u64, &mut Vec<PlannedReform>),
    p: &Planner<'_>,
    (i, e): (usize, &Entry),
    form: Form,
    known: Option<(u32, u32)>,
) {
    let (tokens, blocks) = known.unwrap_or_else(|| forms::cost(p.counter, e, &form));
    *freed += p
        .now(i)
        .saturating_sub(u64::from(tokens) + p.framing * u64::from(blocks));
    reforms.push(PlannedReform {
        id: p.items[i].id,
        form,
        tokens,
    });
}

/// Phase 6, the edits and their figures: the drops, the reforms (reduced forms with the
/// summary they point at, and kept entries over the cap shown capped), per class what
/// was kept, summarized and dropped.
pub(super) fn edits(
    p: &Planner<'_>,
    fate: &[Fate],
    staying: &[Option<Staying>],
    runs: &Runs,
) -> Edits {
    let mut out = Edits::default();
    let cap = p.policy.entry_cap_tokens();
    for (i, item) in p.items.iter().enumerate() {
        let cell = out.outcome.get_mut(item.shape.retention);
        match fate[i] {
            Fate::Keep => {
                if let Some(cap) = cap
                    && item.tokens > cap
                    && item.form == Form::Verbatim
                    && !item.shape.summary
                    && let Some(e) = p.entry(i)
                    && let Some(capped) = super::cap::cap_message(&e.message, e.id, cap, p.counter)
                {
                    reform(
                        (&mut out.freed, &mut out.reforms),
                        p,
                        (i, e),
                        Form::Capped(Box::new(capped)),
                        None,
                    );
                    // Kept as far as the cap lets it: what it still holds in the view.
                    let shown = out.reforms.last().map_or(item.tokens, |r| r.tokens);
                    cell.kept.add(shown);
                } else {
                    cell.kept.add(item.tokens);
                }
            }
            Fate::Summarize => {
                out.freed += p.now(i);
                cell.summarized.add(item.tokens);
            }
            Fate::Drop => {
                out.freed += p.now(i);
                out.drops.push(item.id);
                cell.dropped.add(item.tokens);
            }
            Fate::SummarizeStay | Fate::DropStay => {
                let (Some(e), Some(s)) = (p.entry(i), staying[i]) else {
                    continue;
                };
                // A placeholder names its summary: counted again with the real id.
                let (form, known) = match s.form {
                    StayForm::CallsOnly => (Form::CallsOnly, Some((s.tokens, s.blocks))),
                    StayForm::Command => (Form::Command, Some((s.tokens, s.blocks))),
                    StayForm::Placeholder => {
                        let summary = runs.run_of[i].map(|k| runs.runs[k].summary);
                        (Form::Placeholder { summary }, None)
                    }
                };
                reform((&mut out.freed, &mut out.reforms), p, (i, e), form, known);
                if fate[i] == Fate::SummarizeStay {
                    cell.summarized.add(item.tokens);
                } else {
                    cell.dropped.add(item.tokens);
                }
            }
        }
    }
    out
}
