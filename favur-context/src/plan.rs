//! The planner: from the view, the entries' classes and the policy, decide what one
//! compaction does. Pure and linear: no summarizer runs here, nothing is changed.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::Serialize;

use crate::account::TokenCounter;
use crate::entry::{Entry, EntryId};
use crate::history::History;
use crate::message::{Message, Part, Role, ToolResult};
use crate::policy::{Action, Policy};
use crate::retention::Retention;
use crate::view::{Form, ViewItem};

/// Entries and tokens, one cell of a [`CompactionReport`](crate::CompactionReport).
///
/// ```
/// let f = favur_context::Figures { entries: 2, tokens: 40 };
/// assert_eq!(f.entries, 2);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Figures {
    /// Number of view items.
    pub entries: u64,
    /// Their tokens in the view before the compaction (without framing).
    pub tokens: u64,
}

impl Figures {
    fn add(&mut self, tokens: u32) {
        self.entries += 1;
        self.tokens += u64::from(tokens);
    }
}

/// What a compaction did to the view items of one class.
///
/// An entry is *summarized* when its content went into a summary (even if its tool-call
/// part stays as [`Form::CallsOnly`] or its result as a [`Form::Placeholder`]), *dropped*
/// when its content left the view without a summary, and *kept* otherwise (including
/// entries shortened by the per-entry cap).
///
/// ```
/// let o = favur_context::ClassOutcome::default();
/// assert_eq!(o.kept.entries + o.summarized.entries + o.dropped.entries, 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ClassOutcome {
    /// Left in the view as they were (or capped).
    pub kept: Figures,
    /// Replaced by a summary.
    pub summarized: Figures,
    /// Removed from the view (still in the history).
    pub dropped: Figures,
}

/// One value per retention class.
///
/// ```
/// use favur_context::{ByClass, Retention};
/// let mut b = ByClass { forgettable: 1, fuzzy: 2, strict: 3 };
/// *b.get_mut(Retention::Fuzzy) += 1;
/// assert_eq!(*b.get(Retention::Fuzzy), 3);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ByClass<T> {
    /// For forgettable entries.
    pub forgettable: T,
    /// For fuzzy entries.
    pub fuzzy: T,
    /// For strict entries.
    pub strict: T,
}

impl<T> ByClass<T> {
    /// The value for `class`.
    ///
    /// ```
    /// use favur_context::{ByClass, Retention};
    /// assert_eq!(*ByClass { forgettable: 'a', fuzzy: 'b', strict: 'c' }.get(Retention::Strict), 'c');
    /// ```
    pub fn get(&self, class: Retention) -> &T {
        match class {
            Retention::Forgettable => &self.forgettable,
            Retention::Fuzzy => &self.fuzzy,
            Retention::Strict => &self.strict,
        }
    }

    /// The value for `class`, mutably.
    ///
    /// ```
    /// use favur_context::{ByClass, Retention};
    /// let mut b = ByClass { forgettable: 0, fuzzy: 0, strict: 0 };
    /// *b.get_mut(Retention::Forgettable) = 5;
    /// assert_eq!(b.forgettable, 5);
    /// ```
    pub fn get_mut(&mut self, class: Retention) -> &mut T {
        match class {
            Retention::Forgettable => &mut self.forgettable,
            Retention::Fuzzy => &mut self.fuzzy,
            Retention::Strict => &mut self.strict,
        }
    }
}

/// One contiguous run of the view that becomes one summary.
///
/// ```
/// use favur_context::{EntryId, Retention, Run};
/// let run = Run { summary: EntryId(9), members: vec![EntryId(2), EntryId(3)], retention: Retention::Fuzzy, budget_tokens: 100 };
/// assert_eq!(run.members.len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Run {
    /// The id the summary entry will get.
    pub summary: EntryId,
    /// The entries it replaces, in view order.
    pub members: Vec<EntryId>,
    /// The class the summary carries: strict if any member is strict, fuzzy otherwise.
    pub retention: Retention,
    /// The budget of its summary: the policy's summary budget, but at most three quarters
    /// of the members' tokens (at least 48), so that a summary stays smaller than what it
    /// replaces.
    pub budget_tokens: u32,
}

/// A reform decided by the planner: the entry stays in the view in another form.
///
/// ```
/// use favur_context::{EntryId, Form, PlannedReform};
/// let r = PlannedReform { id: EntryId(1), form: Form::CallsOnly, tokens: 12 };
/// assert_eq!(r.tokens, 12);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedReform {
    /// The entry.
    pub id: EntryId,
    /// Its new form.
    pub form: Form,
    /// Its tokens in that form.
    pub tokens: u32,
}

/// What one compaction will do, before any summary is written.
///
/// Made by [`Plan::new`] (pure: reads the history, changes nothing). The engine then
/// asks a summarizer for one text per [`Run`] and commits the plan as a
/// [`Compaction`](crate::Compaction) record.
///
/// ```
/// use favur_context::{forgettable, strict, History, Plan, Policy};
/// let mut h = History::new();
/// h.append(strict!(user: "list the files"));
/// h.append(strict!(tool_call: "c1", "bash", serde_json::json!({"command": "ls"})));
/// h.append(forgettable!(tool_result("c1"): "{}", "src/module.rs\n".repeat(200)));
/// h.append(strict!(assistant: "two hundred files"));
/// let plan = Plan::new(&h, &Policy::default(), 1);
/// // The listing's call is strict and stays, so the listing becomes a placeholder
/// // pointing at the summary that holds its gist.
/// assert_eq!(plan.runs().len(), 1);
/// assert_eq!(plan.runs()[0].members.len(), 1);
/// assert!(plan.drops().is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    tier: u8,
    usage_before: u64,
    runs: Vec<Run>,
    reforms: Vec<PlannedReform>,
    drops: Vec<EntryId>,
    outcome: ByClass<ClassOutcome>,
    #[serde(skip)]
    pub(crate) stamp: Stamp,
}

/// What identifies the state of a history a plan was made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) next_id: EntryId,
    pub(crate) view_len: usize,
    pub(crate) view_tokens: u64,
    pub(crate) compactions: usize,
}

impl Stamp {
    pub(crate) fn of(history: &History) -> Stamp {
        Stamp {
            next_id: history.next_id(),
            view_len: history.view().len(),
            view_tokens: history.view().tokens(),
            compactions: history.compactions().len(),
        }
    }
}

/// What becomes of one view item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Stays as it is (the cap may still shorten it).
    Keep,
    /// Content goes into a summary; leaves the view.
    Summarize,
    /// Leaves the view.
    Drop,
    /// Content goes into a summary; stays as calls-only or placeholder.
    SummarizeStay,
    /// Content leaves; stays as calls-only or placeholder.
    DropStay,
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

/// The smallest budget a summary is given.
const MIN_SUMMARY_BUDGET: u32 = 48;

/// Tokens of a summary's header beyond the ids it names (an estimate, on the safe side).
const HEADER_TOKENS: u64 = 32;

/// Tokens each id range (`#3-#7`) adds to a summary's header (an estimate).
const RANGE_TOKENS: u64 = 4;

/// The budget of a run's summary: it grows with the material merged, the policy's
/// tokens per entry for each member, never more than three quarters of the members' own
/// tokens; at least [`MIN_SUMMARY_BUDGET`], at most the policy's summary budget.
fn summary_budget(member_tokens: u32, members: usize, policy: &Policy) -> u32 {
    let members = u32::try_from(members).unwrap_or(u32::MAX);
    policy
        .summary_tokens_per_entry()
        .saturating_mul(members)
        .min(member_tokens / 4 * 3)
        .max(MIN_SUMMARY_BUDGET)
        .min(policy.summary_budget_tokens())
}

/// Bound on the rounds that settle pairing and runs after small runs are kept.
const MAX_SETTLE_ROUNDS: usize = 4;

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

impl Plan {
    /// Plans a compaction of `history` at `tier` (1-based) under `policy`.
    ///
    /// The rules, all read from classes and positions only:
    /// - only consumed entries are compactable: those before the newest assistant entry;
    ///   that entry and everything after it (the in-flight tail) stay untouched, and so do
    ///   the last [`keep_recent`](Policy::keep_recent) consumed exchanges;
    /// - each compactable entry gets its class's action in the tier's row; a summary is
    ///   never summarized again (its class's `summarize` means keep);
    /// - a tool call and its results stay or leave together: if any of them stays, the
    ///   others stay too, an assistant entry as [`Form::CallsOnly`] and a result entry as
    ///   [`Form::Placeholder`], with only their content compacted;
    /// - each contiguous run of summarized entries (dropped entries in between do not
    ///   break it) becomes one summary, in place, unless the summary (its budget, the
    ///   header naming the ids, its framing) would cost at least what the run frees: such
    ///   a run is kept as it is, so a compaction never grows the request;
    /// - with a [cap](Policy::entry_cap_tokens), kept entries over it are shown
    ///   [`Form::Capped`].
    ///
    /// A tier that does not exist in the policy gives an empty plan.
    ///
    /// ```
    /// use favur_context::{fuzzy, strict, History, Plan, Policy};
    /// let mut h = History::new();
    /// h.append(fuzzy!(user: "look around"));
    /// h.append(fuzzy!(assistant: "looked"));
    /// h.append(strict!(user: "now fix it")); // in flight
    /// let plan = Plan::new(&h, &Policy::default(), 2);
    /// assert_eq!(plan.drops().len(), 1); // fuzzy is dropped at tier 2...
    /// assert_eq!(plan.tier(), 2);        // ...but the newest assistant entry is in flight
    /// ```
    pub fn new(history: &History, policy: &Policy, tier: u8) -> Plan {
        let mut plan = Plan {
            tier,
            usage_before: history.usage_tokens(),
            runs: Vec::new(),
            reforms: Vec::new(),
            drops: Vec::new(),
            outcome: ByClass::default(),
            stamp: Stamp::of(history),
        };
        let Some(row) = policy.tier(tier) else {
            return plan;
        };
        let items = history.view().items();
        let n = items.len();
        // By id, not by index: a journaled history holds only the originals still in the
        // view (and pinned ones), so an entry's index need not be its id.
        let entry_of = |item: &ViewItem| -> Option<&Entry> { history.entry(item.id) };

        // 1. The compactable prefix: before the newest assistant entry, less the last
        //    `keep_recent` exchanges.
        let boundary = items.iter().rposition(is_consumer).unwrap_or(0);
        let mut end = boundary;
        let mut left = policy.keep_recent();
        while left > 0 && end > 0 {
            end -= 1;
            if is_consumer(&items[end]) {
                left -= 1;
            }
        }
        if left > 0 {
            end = 0;
        }

        // 2. The action each item would get by its class alone, from what the view item
        //    holds of its entry: no entry is read here.
        let mut fate: Vec<Fate> = Vec::with_capacity(n);
        // Class, role and number of parts (saturated): what later passes need, so that
        // they read no entry unless a message's parts must be looked at.
        let mut meta: Vec<(Retention, Option<Role>, u16)> = Vec::with_capacity(n);
        for (i, item) in items.iter().enumerate() {
            let shape = item.shape;
            meta.push((shape.retention, Some(shape.role), shape.parts));
            let f = if i < end {
                let already = matches!(item.form, Form::CallsOnly | Form::Placeholder { .. });
                match (row.action(shape.retention), shape.summary || already) {
                    (Action::Keep, _) => Fate::Keep,
                    (Action::Summarize, true) => Fate::Keep,
                    (Action::Summarize, false) => Fate::Summarize,
                    (Action::Drop, _) => Fate::Drop,
                }
            } else {
                Fate::Keep
            };
            fate.push(f);
        }

        // Steps 3 to 5 settle pairing, forms and runs. A run whose members cost less than
        // the smallest summary is not worth summarizing (it would grow the request): its
        // summarized members are kept as they are and the steps run again, since keeping
        // them can change what their tool partners must do. A few rounds settle it.
        let counter = history.counter();
        let framing = u64::from(history.framing_tokens());
        let base = fate.clone();
        let mut kept_small: Vec<usize> = Vec::new();
        let mut staying_forms: Vec<u8> = Vec::new();
        let mut run_of: Vec<u64> = Vec::new();
        let mut stay_tokens: Vec<u32> = Vec::new();
        let mut newly: Vec<usize> = Vec::new();
        let mut pair_again = true;
        for round in 0..MAX_SETTLE_ROUNDS {
            plan.runs.clear();
            if !pair_again {
                // Keeping these changes no tool pairing: only the runs are rebuilt.
                for &i in &newly {
                    fate[i] = Fate::Keep;
                    staying_forms[i] = 0;
                }
            } else {
                fate.clone_from(&base);
                for &i in &kept_small {
                    fate[i] = Fate::Keep;
                }
                // 3. Tool pairing: a call and its results stay or leave together. Paired exchange
                //    by exchange (an assistant entry and the entries after it up to the next
                //    assistant entry): the tool entries of an exchange answer the calls of its
                //    assistant entry, as every provider requires. Where every assistant and tool
                //    entry of an exchange stays, or every one leaves, there is nothing to pair and
                //    no message is read; otherwise the group stays, reshaped where compacted.
                let role_of = |i: usize| meta[i].1;
                let mut calls: FxMap<&str, u32> = FxMap::default();
                let mut parent: Vec<u32> = Vec::new();
                let mut start = 0usize;
                while start < n {
                    let mut stop = start + 1;
                    while stop < n && role_of(stop) != Some(Role::Assistant) {
                        stop += 1;
                    }
                    let (mut keeps, mut leaves) = (false, false);
                    for (i, f) in fate.iter().enumerate().take(stop).skip(start) {
                        if matches!(role_of(i), Some(Role::Assistant | Role::Tool)) {
                            if *f == Fate::Keep {
                                keeps = true;
                            } else {
                                leaves = true;
                            }
                        }
                    }
                    let calls_first = keeps
                        && leaves
                        && role_of(start) == Some(Role::Assistant)
                        && match meta[start].2 {
                            0 => false,
                            // One part and tool entries after it: a lone call (not read, to keep
                            // planning free of cache misses; keeping a lone text is harmless).
                            1 => (start + 1..stop).any(|i| meta[i].1 == Some(Role::Tool)),
                            _ => entry_of(&items[start])
                                .is_some_and(|e| e.message.tool_calls().next().is_some()),
                        };
                    if calls_first {
                        // The usual shape: the exchange's tool entries answer its assistant entry's
                        // calls, so they all form one group; one keeps, all stay.
                        for (i, f) in fate.iter_mut().enumerate().take(stop).skip(start) {
                            if matches!(meta[i].1, Some(Role::Assistant | Role::Tool)) {
                                *f = match *f {
                                    Fate::Summarize => Fate::SummarizeStay,
                                    Fate::Drop => Fate::DropStay,
                                    other => other,
                                };
                            }
                        }
                    } else if keeps && leaves {
                        // Results after an assistant entry without calls: link them by id.
                        let len = stop - start;
                        parent.clear();
                        parent.extend(0..len as u32);
                        calls.clear();
                        for local in 0..len {
                            let Some(e) = entry_of(&items[start + local]) else {
                                continue;
                            };
                            for part in &e.message.parts {
                                match part {
                                    Part::ToolCall(c) => {
                                        calls.insert(c.id.as_str(), local as u32);
                                    }
                                    Part::ToolResult(r) => {
                                        if let Some(&j) = calls.get(r.call_id.as_str()) {
                                            let a = find(&mut parent, local as u32);
                                            let b = find(&mut parent, j);
                                            if a != b {
                                                parent[a as usize] = b;
                                            }
                                        }
                                    }
                                    Part::Text(_) => {}
                                }
                            }
                        }
                        let mut stays = vec![false; len];
                        for local in 0..len {
                            if fate[start + local] == Fate::Keep {
                                let r = find(&mut parent, local as u32);
                                stays[r as usize] = true;
                            }
                        }
                        for local in 0..len {
                            let r = find(&mut parent, local as u32);
                            if stays[r as usize] {
                                let f = &mut fate[start + local];
                                *f = match *f {
                                    Fate::Summarize => Fate::SummarizeStay,
                                    Fate::Drop => Fate::DropStay,
                                    other => other,
                                };
                            }
                        }
                    }
                    start = stop;
                }

                // 4. What staying items look like; a reform that changes nothing is a keep.
                // 1 = calls only, 2 = placeholder.
                staying_forms = vec![0; n];
                // What a staying item will cost in its new form.
                stay_tokens = vec![0; n];
                for i in 0..n {
                    if !matches!(fate[i], Fate::SummarizeStay | Fate::DropStay) {
                        continue;
                    }
                    if meta[i].1 == Some(Role::Assistant) && meta[i].2 == 1 {
                        // A lone call: calls-only would show the same; keep it, unread.
                        fate[i] = Fate::Keep;
                        continue;
                    }
                    let Some(e) = entry_of(&items[i]) else {
                        fate[i] = Fate::Keep;
                        continue;
                    };
                    let has_calls = e.message.tool_calls().next().is_some();
                    let has_results = e.message.tool_results().next().is_some();
                    let has_other = e.message.parts.iter().any(|p| matches!(p, Part::Text(_)));
                    match (has_calls, has_results) {
                        (true, false) if has_other && items[i].form != Form::CallsOnly => {
                            staying_forms[i] = 1;
                            stay_tokens[i] = counter.count_message(&Form::CallsOnly.message_for(e));
                        }
                        (false, true) if !matches!(items[i].form, Form::Placeholder { .. }) => {
                            // The summary id is filled in once runs are known; count with
                            // the longest id, so that the estimate is never short.
                            staying_forms[i] = 2;
                            let widest = Form::Placeholder {
                                summary: Some(EntryId(u64::MAX)),
                            };
                            stay_tokens[i] = counter.count_message(&widest.message_for(e));
                        }
                        _ => fate[i] = Fate::Keep,
                    }
                    // A reshaped entry that would cost at least what it shows now is kept
                    // as it is: compaction never makes an entry bigger.
                    if staying_forms[i] != 0 && stay_tokens[i] >= items[i].tokens {
                        staying_forms[i] = 0;
                        fate[i] = Fate::Keep;
                    }
                }
            }

            // 5. Runs: kept items close a run; dropped items leaving the view do not.
            //    `budget_tokens` holds the members' tokens until the budget is set below.
            let mut next_summary = history.next_id().0;
            let mut current: Option<Run> = None;
            // Per run: usage its members free, and how many id ranges its header names.
            let mut freed: Vec<(u64, u64)> = Vec::new();
            // Per run: the view indices from its first member to past its last.
            let mut spans: Vec<(usize, usize)> = Vec::new();
            run_of = vec![u64::MAX; n];
            for i in 0..n {
                match fate[i] {
                    Fate::Summarize | Fate::SummarizeStay => {
                        let class = meta[i].0;
                        let run = current.get_or_insert_with(|| {
                            let r = Run {
                                summary: EntryId(next_summary),
                                members: Vec::new(),
                                retention: Retention::Fuzzy,
                                budget_tokens: 0,
                            };
                            next_summary += 1;
                            freed.push((0, 0));
                            spans.push((i, i));
                            r
                        });
                        let contiguous = run
                            .members
                            .last()
                            .is_some_and(|last| last.0 + 1 == items[i].id.0);
                        run.members.push(items[i].id);
                        run.retention = run.retention.max(class);
                        run.budget_tokens = run.budget_tokens.saturating_add(items[i].tokens);
                        run_of[i] = run.summary.0;
                        if let Some(span) = spans.last_mut() {
                            span.1 = i + 1;
                        }
                        if let Some(f) = freed.last_mut() {
                            f.0 += if fate[i] == Fate::Summarize {
                                u64::from(items[i].tokens) + framing
                            } else {
                                u64::from(items[i].tokens.saturating_sub(stay_tokens[i]))
                            };
                            f.1 += u64::from(!contiguous);
                        }
                    }
                    Fate::Drop => {}
                    Fate::Keep | Fate::DropStay => {
                        if let Some(run) = current.take() {
                            plan.runs.push(run);
                        }
                    }
                }
            }
            if let Some(run) = current.take() {
                plan.runs.push(run);
            }
            // A run is worth a summary only if the summary (its budget, its header naming
            // the ids, its framing) costs less than what its members free.
            if round + 1 == MAX_SETTLE_ROUNDS {
                break;
            }
            newly.clear();
            for ((run, (free, ranges)), &(from, to)) in plan.runs.iter().zip(&freed).zip(&spans) {
                let cost = u64::from(summary_budget(run.budget_tokens, run.members.len(), policy))
                    + HEADER_TOKENS
                    + ranges * RANGE_TOKENS
                    + framing;
                if cost >= *free {
                    newly.extend((from..to).filter(|&i| run_of[i] == run.summary.0));
                }
            }
            if newly.is_empty() {
                break;
            }
            // Pairing must be settled again only if a kept member has a tool partner in its
            // exchange that would still leave the view without it.
            // Exchange bounds: an assistant entry and the entries up to the next one.
            let mut bounds = vec![(0usize, n); n];
            let mut start = 0;
            for (j, b) in bounds.iter_mut().enumerate() {
                if meta[j].1 == Some(Role::Assistant) {
                    start = j;
                }
                b.0 = start;
            }
            let mut stop = n;
            for j in (0..n).rev() {
                bounds[j].1 = stop;
                if meta[j].1 == Some(Role::Assistant) {
                    stop = j;
                }
            }
            pair_again = newly.iter().any(|&i| {
                matches!(meta[i].1, Some(Role::Assistant | Role::Tool))
                    && (bounds[i].0..bounds[i].1).any(|j| {
                        j != i
                            && matches!(meta[j].1, Some(Role::Assistant | Role::Tool))
                            && matches!(fate[j], Fate::Summarize | Fate::Drop)
                            && newly.binary_search(&j).is_err()
                    })
            });
            kept_small.extend_from_slice(&newly);
        }
        for run in &mut plan.runs {
            run.budget_tokens = summary_budget(run.budget_tokens, run.members.len(), policy);
        }

        // 6. Edits and figures.
        let cap = policy.entry_cap_tokens();
        for i in 0..n {
            let item = &items[i];
            if meta[i].1.is_none() {
                continue;
            }
            let cell = plan.outcome.get_mut(meta[i].0);
            match fate[i] {
                Fate::Keep => {
                    if let Some(cap) = cap
                        && item.tokens > cap
                        && let Some(e) = entry_of(item)
                        && item.form == Form::Verbatim
                        && !e.kind.is_summary()
                        && let Some(capped) = cap_message(&e.message, e.id, cap, counter)
                    {
                        let tokens = counter.count_message(&capped);
                        plan.reforms.push(PlannedReform {
                            id: item.id,
                            form: Form::Capped(Box::new(capped)),
                            tokens,
                        });
                    }
                    cell.kept.add(item.tokens);
                }
                Fate::Summarize => cell.summarized.add(item.tokens),
                Fate::Drop => {
                    plan.drops.push(item.id);
                    cell.dropped.add(item.tokens);
                }
                Fate::SummarizeStay | Fate::DropStay => {
                    let Some(e) = entry_of(item) else { continue };
                    let form = match staying_forms[i] {
                        1 => Form::CallsOnly,
                        2 => Form::Placeholder {
                            summary: (run_of[i] != u64::MAX).then_some(EntryId(run_of[i])),
                        },
                        _ => continue,
                    };
                    let tokens = match form {
                        Form::CallsOnly => stay_tokens[i],
                        _ => counter.count_message(&form.message_for(e)),
                    };
                    plan.reforms.push(PlannedReform {
                        id: item.id,
                        form,
                        tokens,
                    });
                    if fate[i] == Fate::SummarizeStay {
                        cell.summarized.add(item.tokens);
                    } else {
                        cell.dropped.add(item.tokens);
                    }
                }
            }
        }
        plan
    }

    /// The tier planned (1-based).
    ///
    /// ```
    /// let h = favur_context::History::new();
    /// assert_eq!(favur_context::Plan::new(&h, &Default::default(), 3).tier(), 3);
    /// ```
    pub fn tier(&self) -> u8 {
        self.tier
    }

    /// Usage (tokens) when the plan was made.
    ///
    /// ```
    /// let h = favur_context::History::new();
    /// assert_eq!(favur_context::Plan::new(&h, &Default::default(), 1).usage_before(), 0);
    /// ```
    pub fn usage_before(&self) -> u64 {
        self.usage_before
    }

    /// The runs to summarize, in view order; their summary ids are consecutive from the
    /// history's next id.
    ///
    /// ```
    /// let h = favur_context::History::new();
    /// assert!(favur_context::Plan::new(&h, &Default::default(), 1).runs().is_empty());
    /// ```
    pub fn runs(&self) -> &[Run] {
        &self.runs
    }

    /// The entries whose form changes (calls-only, placeholder, capped).
    ///
    /// ```
    /// let h = favur_context::History::new();
    /// assert!(favur_context::Plan::new(&h, &Default::default(), 1).reforms().is_empty());
    /// ```
    pub fn reforms(&self) -> &[PlannedReform] {
        &self.reforms
    }

    /// The entries that leave the view without a summary.
    ///
    /// ```
    /// let h = favur_context::History::new();
    /// assert!(favur_context::Plan::new(&h, &Default::default(), 2).drops().is_empty());
    /// ```
    pub fn drops(&self) -> &[EntryId] {
        &self.drops
    }

    /// Per class, the entries and tokens kept, summarized and dropped.
    ///
    /// ```
    /// use favur_context::{forgettable, fuzzy, History, Plan, Policy};
    /// let mut h = History::new();
    /// h.append(forgettable!(user: "spent"));
    /// h.append(fuzzy!(assistant: "ok"));
    /// let plan = Plan::new(&h, &Policy::default(), 2);
    /// assert_eq!(plan.outcome().forgettable.dropped.entries, 1);
    /// assert_eq!(plan.outcome().fuzzy.kept.entries, 1);
    /// ```
    pub fn outcome(&self) -> &ByClass<ClassOutcome> {
        &self.outcome
    }

    /// Whether the plan changes nothing.
    ///
    /// ```
    /// let h = favur_context::History::new();
    /// assert!(favur_context::Plan::new(&h, &Default::default(), 1).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty() && self.reforms.is_empty() && self.drops.is_empty()
    }

    /// The entries of `run`, in order, looked up in `history`.
    ///
    /// ```
    /// use favur_context::{forgettable, fuzzy, History, Plan, Policy};
    /// let mut h = History::new();
    /// h.append(forgettable!(user: "{}", "spent ".repeat(300)));
    /// h.append(fuzzy!(assistant: "ok"));
    /// let plan = Plan::new(&h, &Policy::default(), 1);
    /// assert_eq!(plan.run_entries(&h, &plan.runs()[0]).len(), 1);
    /// // A run smaller than its summary would be is kept as it is.
    /// let mut small = History::new();
    /// small.append(forgettable!(user: "spent"));
    /// small.append(fuzzy!(assistant: "ok"));
    /// assert!(Plan::new(&small, &Policy::default(), 1).runs().is_empty());
    /// ```
    pub fn run_entries<'h>(&self, history: &'h History, run: &Run) -> Vec<&'h Entry> {
        run.members
            .iter()
            .filter_map(|id| history.entry(*id))
            .collect()
    }
}

impl Form {
    /// The message an entry shows in this form: the original for
    /// [`Verbatim`](Form::Verbatim), only the tool calls for
    /// [`CallsOnly`](Form::CallsOnly), placeholder results for
    /// [`Placeholder`](Form::Placeholder), the shortened message for
    /// [`Capped`](Form::Capped). Token counts in the view are counts of this message.
    ///
    /// ```
    /// use favur_context::{forgettable, EntryId, Form, History};
    /// let mut h = History::new();
    /// let id = h.append(forgettable!(tool_result("c1"): "a.rs\nb.rs"));
    /// let e = h.recall(id).unwrap();
    /// let shown = Form::Placeholder { summary: Some(EntryId(7)) }.message_for(&e);
    /// let text = &shown.tool_results().next().unwrap().content;
    /// assert!(text.contains("#7") && text.contains("#0"));
    /// ```
    pub fn message_for<'a>(&'a self, entry: &'a Entry) -> Cow<'a, Message> {
        match self {
            Form::Verbatim => Cow::Borrowed(&entry.message),
            Form::Capped(m) => Cow::Borrowed(m),
            Form::CallsOnly => {
                let mut m = Message::new(
                    entry.message.role,
                    entry
                        .message
                        .parts
                        .iter()
                        .filter(|p| matches!(p, Part::ToolCall(_)))
                        .cloned()
                        .collect(),
                );
                m.extensions = entry.message.extensions.clone();
                Cow::Owned(m)
            }
            Form::Placeholder { summary } => {
                let mut m = Message::new(
                    entry.message.role,
                    entry
                        .message
                        .parts
                        .iter()
                        .filter_map(|p| match p {
                            Part::ToolResult(r) => Some(Part::ToolResult(ToolResult {
                                call_id: r.call_id.clone(),
                                content: placeholder_text(entry.id, *summary),
                                is_error: r.is_error,
                            })),
                            _ => None,
                        })
                        .collect(),
                );
                m.extensions = entry.message.extensions.clone();
                Cow::Owned(m)
            }
        }
    }
}

/// The text a compacted tool result shows in place of its content.
///
/// ```
/// use favur_context::{placeholder_text, EntryId};
/// assert_eq!(placeholder_text(EntryId(3), Some(EntryId(9))), "[compacted: the gist of this result is in summary #9; the original is entry #3]");
/// assert_eq!(placeholder_text(EntryId(3), None), "[compacted: this result was dropped from the context; the original is entry #3]");
/// ```
pub fn placeholder_text(original: EntryId, summary: Option<EntryId>) -> String {
    match summary {
        Some(s) => format!(
            "[compacted: the gist of this result is in summary {s}; the original is entry {original}]"
        ),
        None => format!(
            "[compacted: this result was dropped from the context; the original is entry {original}]"
        ),
    }
}

/// Shortens the text parts and result contents of `message` so that it counts at most
/// `cap` tokens, keeping the head and the tail of each with a visible elision marker.
/// `None` if it cannot be brought under the cap (its calls alone exceed it).
fn cap_message(
    message: &Message,
    id: EntryId,
    cap: u32,
    counter: &dyn TokenCounter,
) -> Option<Message> {
    let total: usize = message
        .parts
        .iter()
        .map(|p| match p {
            Part::Text(t) => t.len(),
            Part::ToolResult(r) => r.content.len(),
            Part::ToolCall(_) => 0,
        })
        .sum();
    if total == 0 {
        return None;
    }
    // Start from the heuristic inverse (about 4 bytes a token) and shrink until it fits.
    let mut allowed = (cap as usize).saturating_mul(4).saturating_sub(160);
    for _ in 0..6 {
        let mut out = message.clone();
        for part in &mut out.parts {
            let text = match part {
                Part::Text(t) => t,
                Part::ToolResult(r) => &mut r.content,
                Part::ToolCall(_) => continue,
            };
            let share = allowed.saturating_mul(text.len()) / total;
            if text.len() > share {
                *text = elide(text, share, id);
            }
        }
        let tokens = counter.count_message(&out);
        if tokens <= cap {
            return Some(out);
        }
        let over = tokens as usize;
        allowed = allowed.saturating_mul(cap as usize) / over.max(1);
        allowed = allowed.saturating_mul(9) / 10;
        if allowed == 0 {
            break;
        }
    }
    None
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

fn elide(text: &str, keep: usize, id: EntryId) -> String {
    let head = floor_boundary(text, keep * 2 / 3);
    let tail = ceil_boundary(text, text.len() - (keep - keep * 2 / 3)).max(head);
    let elided = tail - head;
    format!(
        "{}\n[... {elided} bytes elided by the per-entry cap; the original is entry {id} ...]\n{}",
        &text[..head],
        &text[tail..]
    )
}
