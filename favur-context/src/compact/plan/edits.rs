//! Phase 6, the edits: the drops, the reforms (reduced forms with the summary they point
//! at, kept entries over the cap shown capped) and per class what was kept, summarized
//! and dropped, with what they free.

use crate::model::entry::{Entry, EntryId};
use crate::sent;
use crate::sent::Form;

use super::phases::{Fate, Planner, Runs};
use super::{ByClass, ClassOutcome, PlannedReform};
use crate::sent::{StayForm, Staying};

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
    let (tokens, blocks) = known.unwrap_or_else(|| sent::cost(p.counter, e, &form));
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
                    && let Some(capped) = crate::sent::cap_message(&e.message, e.id, cap, p.counter)
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
