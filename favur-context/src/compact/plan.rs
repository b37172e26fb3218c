//! The planner: from the view, the entries' classes and the policy, decide what one
//! compaction does. Pure and linear: no summarizer runs here, nothing is changed.

use std::num::NonZeroU8;

use serde::Serialize;

use crate::compact::policy::Policy;
use crate::history::History;
use crate::model::entry::{Entry, EntryId};
use crate::model::retention::Retention;
use crate::sent::Form;

mod bound;
mod edits;
mod outcome;
mod phases;
mod reach;
mod settle;
use settle::{Settled, settle};

pub use outcome::{ByClass, ClassOutcome, Figures};

/// One contiguous run of the view that becomes one summary.
///
/// ```
/// use favur_context::compact::Plan;
/// use favur_context::{forgettable, fuzzy, History, Policy, Retention};
/// let mut h = History::new();
/// let view = h.append(fuzzy!(user: "{}", "a view ".repeat(300)));
/// let listing = h.append(forgettable!(user: "{}", "a listing ".repeat(300)));
/// h.append(fuzzy!(assistant: "ok"));
/// let plan = Plan::new(&h, &Policy::default(), std::num::NonZeroU8::MIN);
/// let run = &plan.runs()[0];
/// assert_eq!(run.members, [view, listing]);
/// assert_eq!(run.summary, h.next_id());
/// assert_eq!(run.retention, Retention::Fuzzy); // no member is strict
/// assert!(run.budget_tokens < h.entries()[0].tokens() + h.entries()[1].tokens());
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
/// use favur_context::compact::Plan;
/// use favur_context::render::Form;
/// use favur_context::{forgettable, strict, History, Policy};
/// let mut h = History::new();
/// h.append(strict!(user: "list the files"));
/// h.append(strict!(tool_call: "c1", "bash", serde_json::json!({"command": "ls"})));
/// let listing = h.append(forgettable!(tool_result("c1"): "{}", "src/module.rs\n".repeat(200)));
/// h.append(strict!(assistant: "two hundred files"));
/// let plan = Plan::new(&h, &Policy::default(), std::num::NonZeroU8::MIN);
/// // The call is strict and stays, so its result stays too, as a placeholder.
/// let r = &plan.reforms()[0];
/// assert_eq!(r.id, listing);
/// assert_eq!(r.form, Form::Placeholder { summary: Some(plan.runs()[0].summary) });
/// assert!(r.tokens < h.entries()[2].tokens());
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
/// [`Compaction`](crate::compact::Compaction) record.
///
/// ```
/// use favur_context::compact::Plan;
/// use favur_context::{forgettable, strict, History, Policy};
/// let mut h = History::new();
/// h.append(strict!(user: "list the files"));
/// h.append(strict!(tool_call: "c1", "bash", serde_json::json!({"command": "ls"})));
/// h.append(forgettable!(tool_result("c1"): "{}", "src/module.rs\n".repeat(200)));
/// h.append(strict!(assistant: "two hundred files"));
/// let plan = Plan::new(&h, &Policy::default(), std::num::NonZeroU8::MIN);
/// // The listing's call is strict and stays, so the listing becomes a placeholder
/// // pointing at the summary that holds its gist.
/// assert_eq!(plan.runs().len(), 1);
/// assert_eq!(plan.runs()[0].members.len(), 1);
/// assert!(plan.drops().is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    tier: NonZeroU8,
    usage_before: u64,
    runs: Vec<Run>,
    reforms: Vec<PlannedReform>,
    drops: Vec<EntryId>,
    outcome: ByClass<ClassOutcome>,
    reclaim: u64,
    prefix: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    superseded: Vec<EntryId>,
    /// The rounds the planner took to settle pairing and runs (0: it gave up).
    #[serde(skip)]
    settle_rounds: usize,
    /// Whether the rounds ran out before every run was worth its summary.
    #[serde(skip)]
    unsettled: bool,
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

/// The smallest budget a summary is given.
const MIN_SUMMARY_BUDGET: u32 = 48;

/// The budget of a run's summary: it grows with the material merged, the policy's
/// tokens per entry for each member, never more than three quarters of the members' own
/// tokens; at least [`MIN_SUMMARY_BUDGET`], at most the policy's summary budget.
fn summary_budget(member_tokens: u32, members: usize, per_entry: u32, policy: &Policy) -> u32 {
    let members = u32::try_from(members).unwrap_or(u32::MAX);
    per_entry
        .saturating_mul(members)
        .min(member_tokens / 4 * 3)
        .max(MIN_SUMMARY_BUDGET)
        .min(policy.summary_budget_tokens())
}

/// What share of what a tier must free a plan may leave unfreed so that its summaries of
/// strict material can grow (nine tenths of it must still be freed): see [`grown`].
const GROWTH_FLOOR: (u64, u64) = (9, 10);

/// `settled`, the plan of `fates` (the tier's reach, chosen with summaries at the
/// policy's tokens per entry), with its summaries of strict material given the most
/// tokens per entry, up to the policy's
/// [`strict_summary_tokens_per_entry`](Policy::strict_summary_tokens_per_entry), that
/// still frees nine tenths of `need` and the policy's `min_reclaim`. Strict means the
/// exact text will matter: the room the reach leaves goes to more of its exact lines,
/// never to a reach further into newer material. A plan with no strict summary, or no
/// room, is returned as it is, with no re-planning.
fn grown(p: &phases::Planner<'_>, fates: &[phases::Fate], need: u64, settled: Settled) -> Settled {
    let (mut lo, mut hi) = (
        p.strict_per_entry,
        p.policy.strict_summary_tokens_per_entry(),
    );
    let strict = |s: &Settled| s.runs.runs.iter().any(|r| r.retention == Retention::Strict);
    if hi <= lo || !strict(&settled) {
        return settled;
    }
    let floor =
        (need.saturating_mul(GROWTH_FLOOR.0) / GROWTH_FLOOR.1).max(p.policy.min_reclaim_tokens());
    let at = |strict_per_entry: u32| {
        let q = phases::Planner {
            strict_per_entry,
            ..*p
        };
        settle(&q, fates.to_vec()).filter(|s| s.reclaim() >= floor)
    };
    if let Some(s) = at(hi) {
        return s;
    }
    // The largest budget that frees enough, to within a sixteenth of the range.
    let mut best = settled;
    for _ in 0..4 {
        let mid = lo + (hi - lo) / 2;
        if mid <= lo {
            break;
        }
        match at(mid) {
            Some(s) => {
                lo = mid;
                best = s;
            }
            None => hi = mid,
        }
    }
    best
}

/// The settled plan of a tier that takes the oldest eligible material (`order`:
/// superseded first) and stops once it frees `need`, its strict summaries then
/// [`grown`] into the room left; the whole tier if even that frees less.
fn reached(
    p: &phases::Planner<'_>,
    base: Vec<phases::Fate>,
    order: &[usize],
    need: u64,
) -> Option<Settled> {
    let whole = settle(p, base.clone());
    if whole.as_ref().map_or(0, Settled::reclaim) < need {
        return whole;
    }
    let k = reach::smallest(order.len(), need, |k| {
        settle(p, reach::limited(&base, order, k)).map_or(0, |s| s.reclaim())
    });
    let fates = reach::limited(&base, order, k);
    let settled = settle(p, fates.clone())?;
    Some(grown(p, &fates, need, settled))
}

impl Plan {
    /// The most a plan of `tier` can free now (see [`reclaim_estimate`](Plan::reclaim_estimate)),
    /// read from the view items in one pass: a plan is not worth making when even this
    /// is under the policy's minimum.
    pub(crate) fn most_freed(history: &History, policy: &Policy, tier: NonZeroU8) -> u64 {
        let Some(row) = policy.tier(tier) else {
            return 0;
        };
        let items = history.view().items();
        let framing = u64::from(history.framing_tokens());
        let frame = history.summary_frame();
        bound::most_freed(
            items,
            phases::prefix(items, policy.keep_recent()),
            row,
            framing,
            policy.entry_cap_tokens(),
            bound::SummaryFloor {
                per_entry: policy.summary_tokens_per_entry(),
                budget_cap: policy.summary_budget_tokens(),
                fixed: frame.0 + frame.1 + framing,
            },
        )
    }

    /// Plans a compaction of `history` at `tier` (tiers are numbered from 1) under `policy`.
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
    /// - the tier takes what its row acts on in order, superseded entries first, then the
    ///   oldest, and stops at the smallest reach that brings usage to the policy's
    ///   [target](Policy::target) above the pinned tokens
    ///   ([`target_tokens_above`](Policy::target_tokens_above)), freeing at least
    ///   `min_reclaim`; with no target, or
    ///   usage already under it (a tier applied by hand), it is applied whole.
    /// - with the reach chosen, its summaries of strict material are given up to
    ///   [`strict_summary_tokens_per_entry`](Policy::strict_summary_tokens_per_entry) per
    ///   entry, the most for which it still frees nine tenths of what the target asks.
    ///
    /// A tier that does not exist in the policy gives an empty plan.
    ///
    /// ```
    /// use favur_context::compact::Plan;
    /// use favur_context::{fuzzy, strict, History, Policy};
    /// let mut h = History::new();
    /// h.append(fuzzy!(user: "look around, {}", "carefully ".repeat(20)));
    /// h.append(fuzzy!(assistant: "looked"));
    /// h.append(strict!(user: "now fix it")); // in flight
    /// let plan = Plan::new(&h, &Policy::default(), std::num::NonZeroU8::new(2).unwrap());
    /// assert_eq!(plan.drops().len(), 1); // fuzzy is dropped at tier 2...
    /// assert_eq!(plan.tier().get(), 2);  // ...but the newest assistant entry is in flight
    /// ```
    pub fn new(history: &History, policy: &Policy, tier: NonZeroU8) -> Plan {
        let mut plan = Plan {
            tier,
            usage_before: history.usage_tokens(),
            runs: Vec::new(),
            reforms: Vec::new(),
            drops: Vec::new(),
            outcome: ByClass::default(),
            reclaim: 0,
            prefix: 0,
            superseded: Vec::new(),
            settle_rounds: 0,
            unsettled: false,
            stamp: Stamp::of(history),
        };
        let Some(row) = policy.tier(tier) else {
            return plan;
        };
        let p = phases::Planner {
            history,
            items: history.view().items(),
            policy,
            counter: history.counter(),
            framing: u64::from(history.framing_tokens()),
            frame: history.summary_frame(),
            strict_per_entry: policy.summary_tokens_per_entry(),
        };
        let end = phases::prefix(p.items, policy.keep_recent());
        let base = phases::fates(p.items, end, row);
        let superseded = reach::superseded(&p);
        let order = reach::order(&base, &superseded);
        // What the tier must free to bring usage to its target. Nothing to free (a tier
        // applied by hand below its target) or no target: the tier is applied whole.
        let floor = history.system_tokens() + history.request_overhead_tokens();
        let need = policy.target_tokens_above(tier, floor).and_then(|target| {
            let need = plan.usage_before.saturating_sub(target);
            (policy.target() > 0.0 && need > 0).then(|| need.max(policy.min_reclaim_tokens()))
        });
        let settled = match need {
            Some(need) if order.len() > 1 => reached(&p, base, &order, need),
            _ => settle(&p, base),
        };
        let Some(mut s) = settled else {
            return plan;
        };
        phases::finish_budgets(
            &phases::Planner {
                strict_per_entry: s.strict_per_entry,
                ..p
            },
            &mut s.runs.runs,
        );
        plan.settle_rounds = s.rounds;
        plan.unsettled = s.unsettled;
        if s.unsettled {
            tracing::warn!(
                tier = tier.get(),
                rounds = s.rounds,
                "the compaction plan stopped unsettled: a run whose summary costs at least what it frees may remain"
            );
        }
        plan.superseded = (0..p.items.len())
            .filter(|&i| superseded[i] && s.fate[i] != phases::Fate::Keep)
            .map(|i| p.items[i].id)
            .collect();
        plan.reclaim = s.reclaim();
        plan.prefix =
            history.system_tokens() + phases::unchanged_prefix(&p, &s.fate, &s.edits.reforms);
        plan.runs = s.runs.runs;
        plan.reforms = s.edits.reforms;
        plan.drops = s.edits.drops;
        plan.outcome = s.edits.outcome;
        plan
    }

    /// The entries this plan compacts because a later entry carries the same
    /// [supersession key](crate::Classified::with_key) and shows at least what they show
    /// ([key parts](crate::Classified::with_key_part)): a newer view of the same file or
    /// of lines covering theirs, an edit of it, a rerun of the same command. A tier takes
    /// them before anything else.
    ///
    /// ```
    /// use favur_context::compact::Plan;
    /// use favur_context::{fuzzy, strict, History, Policy};
    /// let mut h = History::new();
    /// h.append(strict!(user: "the task"));
    /// let old = h.append(fuzzy!(user: "{}", "old view of a.rs ".repeat(900)).with_key("a.rs"));
    /// h.append(fuzzy!(user: "{}", "other file ".repeat(900)).with_key("b.rs"));
    /// h.append(fuzzy!(user: "{}", "new view of a.rs ".repeat(900)).with_key("a.rs"));
    /// h.append(fuzzy!(assistant: "ok"));
    /// let plan = Plan::new(&h, &Policy::default(), std::num::NonZeroU8::new(2).unwrap()); // tier 2 drops fuzzy material
    /// assert_eq!(plan.superseded(), &[old]);
    /// // The old view alone brings usage to the target (40% of 20,000 tokens): the other
    /// // views stay verbatim.
    /// assert!(h.usage_tokens() - plan.reclaim_estimate() <= 8_000);
    /// assert_eq!(plan.drops(), &[old]);
    /// ```
    pub fn superseded(&self) -> &[EntryId] {
        &self.superseded
    }

    /// Tokens of the request that this plan leaves as they are at its start (the system
    /// pins and the view items before its first change, framing included): the prefix a
    /// provider's prompt cache still holds after the compaction.
    ///
    /// ```
    /// use favur_context::compact::Plan;
    /// use favur_context::{forgettable, fuzzy, strict, History, Policy};
    /// let mut h = History::new();
    /// h.append(strict!(user: "the task"));
    /// h.append(forgettable!(user: "{}", "listing ".repeat(400)));
    /// h.append(fuzzy!(assistant: "ok"));
    /// let plan = Plan::new(&h, &Policy::default(), std::num::NonZeroU8::new(2).unwrap());
    /// assert_eq!(plan.prefix_tokens(), u64::from(h.entries()[0].tokens()) + 4); // the task
    /// ```
    pub fn prefix_tokens(&self) -> u64 {
        self.prefix
    }

    /// Tokens this plan is expected to free: what its drops, reforms and summarized
    /// entries free (framing included), less what its summaries cost if each stays within
    /// its budget. [`Compactor::plan`](crate::Compactor::plan) does not fire a plan that
    /// frees less than the policy's [`min_reclaim`](Policy::min_reclaim).
    ///
    /// ```
    /// use favur_context::compact::Plan;
    /// use favur_context::{forgettable, fuzzy, History, Policy};
    /// let mut h = History::new();
    /// h.append(forgettable!(user: "{}", "listing ".repeat(400)));
    /// h.append(fuzzy!(assistant: "ok"));
    /// let plan = Plan::new(&h, &Policy::default(), std::num::NonZeroU8::new(2).unwrap());
    /// assert!(plan.reclaim_estimate() > 400); // the listing is dropped
    /// assert_eq!(Plan::new(&History::new(), &Policy::default(), std::num::NonZeroU8::new(2).unwrap()).reclaim_estimate(), 0);
    /// ```
    pub fn reclaim_estimate(&self) -> u64 {
        self.reclaim
    }

    /// The tier planned (tiers are numbered from 1).
    pub fn tier(&self) -> NonZeroU8 {
        self.tier
    }

    /// Usage (tokens) when the plan was made.
    ///
    /// ```
    /// use favur_context::compact::Plan;
    /// use favur_context::{fuzzy, History, Policy};
    /// let mut h = History::new();
    /// h.append(fuzzy!(user: "hi"));
    /// let plan = Plan::new(&h, &Policy::default(), std::num::NonZeroU8::MIN);
    /// assert_eq!(plan.usage_before(), h.usage_tokens());
    /// h.append(fuzzy!(user: "more"));
    /// assert!(plan.usage_before() < h.usage_tokens()); // a plan is for the history as it was
    /// ```
    pub fn usage_before(&self) -> u64 {
        self.usage_before
    }

    /// The runs to summarize, in view order; their summary ids are consecutive from the
    /// history's next id.
    ///
    /// ```
    /// use favur_context::compact::Plan;
    /// use favur_context::{forgettable, fuzzy, strict, History, Policy};
    /// let mut h = History::new();
    /// h.append(forgettable!(user: "{}", "a listing ".repeat(300)));
    /// h.append(strict!(user: "the plan")); // kept: closes the first run
    /// h.append(fuzzy!(user: "{}", "a view ".repeat(300)));
    /// h.append(fuzzy!(assistant: "ok"));
    /// let plan = Plan::new(&h, &Policy::default(), std::num::NonZeroU8::MIN);
    /// let ids: Vec<_> = plan.runs().iter().map(|r| r.summary.0).collect();
    /// assert_eq!(ids, [h.next_id().0, h.next_id().0 + 1]);
    /// ```
    pub fn runs(&self) -> &[Run] {
        &self.runs
    }

    /// The entries whose form changes (calls-only, placeholder, capped).
    pub fn reforms(&self) -> &[PlannedReform] {
        &self.reforms
    }

    /// The entries that leave the view without a summary.
    ///
    /// ```
    /// use favur_context::compact::Plan;
    /// use favur_context::{forgettable, fuzzy, strict, History, Policy};
    /// let mut h = History::new();
    /// let listing = h.append(forgettable!(user: "{}", "a listing ".repeat(300)));
    /// h.append(strict!(user: "the plan"));
    /// h.append(fuzzy!(assistant: "ok"));
    /// let plan = Plan::new(&h, &Policy::default(), std::num::NonZeroU8::new(2).unwrap()); // tier 2 drops forgettable material
    /// assert_eq!(plan.drops(), &[listing]);
    /// assert!(plan.runs().is_empty()); // a summary of the short strict plan would not pay
    /// ```
    pub fn drops(&self) -> &[EntryId] {
        &self.drops
    }

    /// Per class, the entries and tokens kept, summarized and dropped.
    ///
    /// ```
    /// use favur_context::compact::Plan;
    /// use favur_context::{forgettable, fuzzy, History, Policy};
    /// let mut h = History::new();
    /// h.append(forgettable!(user: "{}", "spent ".repeat(20)));
    /// h.append(fuzzy!(assistant: "ok"));
    /// let plan = Plan::new(&h, &Policy::default(), std::num::NonZeroU8::new(2).unwrap());
    /// assert_eq!(plan.outcome().forgettable.dropped.entries, 1);
    /// assert_eq!(plan.outcome().fuzzy.kept.entries, 1);
    /// ```
    pub fn outcome(&self) -> &ByClass<ClassOutcome> {
        &self.outcome
    }

    /// The rounds the planner took to settle this plan. Keeping a run that is not worth its
    /// summary can change which tool partners must stay, so the planner pairs, forms and
    /// cuts runs again, at most 4 rounds; 1 when the first round's runs were all worth
    /// their summaries, 0 when it gave up (a tier the policy lacks, or a plan that would
    /// not pay for itself: either way the plan changes nothing).
    ///
    /// ```
    /// use favur_context::compact::Plan;
    /// use favur_context::{forgettable, fuzzy, History, Policy};
    /// let mut h = History::new();
    /// h.append(forgettable!(user: "{}", "spent ".repeat(300)));
    /// h.append(fuzzy!(assistant: "ok"));
    /// let plan = Plan::new(&h, &Policy::default(), std::num::NonZeroU8::MIN);
    /// assert_eq!(plan.runs().len(), 1);
    /// assert_eq!(plan.settle_rounds(), 1); // the one run pays for its summary
    /// assert_eq!(Plan::new(&h, &Policy::default(), std::num::NonZeroU8::new(9).unwrap()).settle_rounds(), 0); // no tier 9
    /// ```
    pub fn settle_rounds(&self) -> usize {
        self.settle_rounds
    }

    /// Whether the planner ran out of rounds (see [`settle_rounds`](Plan::settle_rounds))
    /// with a run still costing at least what it frees: such a plan may keep a summary
    /// that does not pay for itself. Logged as a `tracing` warning when it happens.
    ///
    /// ```
    /// use favur_context::compact::Plan;
    /// use favur_context::{forgettable, fuzzy, History, Policy};
    /// let mut h = History::new();
    /// h.append(forgettable!(user: "{}", "spent ".repeat(300)));
    /// h.append(fuzzy!(assistant: "ok"));
    /// let plan = Plan::new(&h, &Policy::default(), std::num::NonZeroU8::MIN);
    /// assert!(!plan.unsettled());
    /// assert!(plan.reclaim_estimate() > 0);
    /// ```
    pub fn unsettled(&self) -> bool {
        self.unsettled
    }

    /// Whether the plan changes nothing.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty() && self.reforms.is_empty() && self.drops.is_empty()
    }

    /// The entries of `run`, in order, looked up in `history`.
    ///
    /// ```
    /// use favur_context::compact::Plan;
    /// use favur_context::{forgettable, fuzzy, History, Policy};
    /// let mut h = History::new();
    /// h.append(forgettable!(user: "{}", "spent ".repeat(300)));
    /// h.append(fuzzy!(assistant: "ok"));
    /// let plan = Plan::new(&h, &Policy::default(), std::num::NonZeroU8::MIN);
    /// assert_eq!(plan.run_entries(&h, &plan.runs()[0]).len(), 1);
    /// // A run smaller than its summary would be is kept as it is.
    /// let mut small = History::new();
    /// small.append(forgettable!(user: "spent"));
    /// small.append(fuzzy!(assistant: "ok"));
    /// assert!(Plan::new(&small, &Policy::default(), std::num::NonZeroU8::MIN).runs().is_empty());
    /// ```
    pub fn run_entries<'h>(&self, history: &'h History, run: &Run) -> Vec<&'h Entry> {
        run.members
            .iter()
            .filter_map(|id| history.entry(*id))
            .collect()
    }
}
