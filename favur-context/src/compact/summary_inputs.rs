//! The inputs of each summary request of a plan: the run's entries, the assistant turns
//! that opened their exchanges (what produced each result), and the assistant turns
//! recorded after the run (what the agent acted on since).

use crate::compact::plan::{Plan, Run};
use crate::compact::summarize::SummaryRequest;
use crate::history::History;
use crate::model::entry::{Entry, EntryId};
use crate::model::message::Role;

/// What one run's summary request borrows from the history.
#[derive(Debug)]
pub(crate) struct RunInputs<'h> {
    /// The run's entries (originals), in view order.
    pub(crate) entries: Vec<&'h Entry>,
    /// The assistant turns that opened their exchanges without being members.
    pub(crate) context: Vec<&'h Entry>,
    /// The assistant turns recorded after the run's last member, still held (at most
    /// the last [`SummaryRequest::MAX_LATER`]).
    pub(crate) later: Vec<&'h Entry>,
}

impl<'h> RunInputs<'h> {
    /// The summary request of `run` (a run of `plan`) on these inputs.
    pub(crate) fn request<'a>(&'a self, plan: &Plan, run: &Run) -> SummaryRequest<'a> {
        SummaryRequest {
            summary: run.summary,
            tier: plan.tier(),
            retention: run.retention,
            budget_tokens: run.budget_tokens,
            entries: &self.entries,
            context: &self.context,
            later: &self.later,
        }
    }
}

/// The inputs of each run of `plan`, in the order of its runs.
pub(crate) fn run_inputs<'h>(history: &'h History, plan: &Plan) -> Vec<RunInputs<'h>> {
    let contexts = run_contexts(history, plan);
    let later = later_turns(history, plan);
    plan.runs()
        .iter()
        .zip(contexts)
        .zip(later)
        .map(|((run, context), later)| RunInputs {
            entries: plan.run_entries(history, run),
            context,
            later,
        })
        .collect()
}

/// The summary request of each run of `plan`, on its inputs (from [`run_inputs`]).
pub(crate) fn summary_requests<'a>(
    plan: &'a Plan,
    inputs: &'a [RunInputs<'a>],
) -> impl Iterator<Item = SummaryRequest<'a>> {
    plan.runs()
        .iter()
        .zip(inputs)
        .map(|(run, input)| input.request(plan, run))
}

/// For each run of `plan`, the assistant turns recorded after its last member that the
/// history still holds (not summaries), in order, at most the last
/// [`SummaryRequest::MAX_LATER`]: one scan of the history's tail for all runs.
fn later_turns<'h>(history: &'h History, plan: &Plan) -> Vec<Vec<&'h Entry>> {
    let last_of = |run: &Run| run.members.iter().max().copied().unwrap_or(EntryId(0));
    let Some(earliest) = plan.runs().iter().map(last_of).min() else {
        return Vec::new();
    };
    let entries = history.entries();
    let from = entries.partition_point(|e| e.id() <= earliest);
    let turns: Vec<&'h Entry> = entries
        .get(from..)
        .unwrap_or_default()
        .iter()
        .filter(|e| e.message().role == Role::Assistant && !e.kind().is_summary())
        .collect();
    plan.runs()
        .iter()
        .map(|run| {
            let after = turns.partition_point(|e| e.id() <= last_of(run));
            let slice = turns.get(after..).unwrap_or_default();
            let keep = slice.len().saturating_sub(SummaryRequest::MAX_LATER);
            slice.get(keep..).unwrap_or_default().to_vec()
        })
        .collect()
}

/// For each run of `plan`, the assistant turns that opened the exchanges of its members
/// without being members themselves: what the summarizer reads to say what produced each
/// result. An output's turn is the assistant entry recorded before it (past the other
/// results of the same turn), whether it is still in the view or not, so an observation
/// whose turn was compacted earlier still names its command (in a journaled history, a
/// turn evicted from memory is not read back for this).
fn run_contexts<'h>(history: &'h History, plan: &Plan) -> Vec<Vec<&'h Entry>> {
    const MAX_RESULTS_PER_TURN: u64 = 64;
    plan.runs()
        .iter()
        .map(|run| {
            let members: std::collections::HashSet<EntryId> = run.members.iter().copied().collect();
            let mut ids: Vec<EntryId> = Vec::new();
            for id in &run.members {
                let Some(member) = history.entry(*id) else {
                    continue;
                };
                if member.kind().is_summary()
                    || !matches!(member.message().role, Role::Tool | Role::User)
                {
                    continue;
                }
                let mut at = id.0;
                let mut steps = 0;
                while at > 0 && steps < MAX_RESULTS_PER_TURN {
                    at -= 1;
                    steps += 1;
                    let Some(prev) = history.entry(EntryId(at)) else {
                        break;
                    };
                    match prev.message().role {
                        Role::Tool => continue,
                        Role::Assistant if !prev.kind().is_summary() => {
                            if !members.contains(&prev.id()) && !ids.contains(&prev.id()) {
                                ids.push(prev.id());
                            }
                            break;
                        }
                        _ => break,
                    }
                }
            }
            ids.sort_unstable();
            ids.into_iter().filter_map(|id| history.entry(id)).collect()
        })
        .collect()
}
