//! Span survival counted: per strategy, overall and by the class of the source, and the
//! spans a run lost (what `--dump` lists).

use favur_context::Retention;

use crate::fate::Fate;
use crate::replay::{Prepared, Run, Step, class_of};
use crate::tally::Tally;

/// Span survival of one strategy: overall and by the class of the source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpanTally {
    /// All spans.
    pub all: Tally,
    /// By the class of their source (forgettable, fuzzy, strict).
    pub by_class: [Tally; 3],
}

impl SpanTally {
    /// Counts the spans of one step.
    pub fn add_step(&mut self, step: &Step, prepared: &Prepared) {
        for o in &step.spans {
            self.all.add(o.survived);
            if let Some(class) = class_of(prepared, o.source) {
                self.by_class[class.index()].add(o.survived);
            }
        }
    }

    /// Adds another tally (for totals).
    pub fn merge(&mut self, o: &SpanTally) {
        self.all.merge(&o.all);
        for (a, b) in self.by_class.iter_mut().zip(o.by_class.iter()) {
            a.merge(b);
        }
    }
}

/// One span the policy lost: the step (request number in its transcript), the span and
/// its source. What `--dump` lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostSpan {
    /// The request number in its transcript (from 0).
    pub step: usize,
    /// The span.
    pub text: String,
    /// The transcript index of its source.
    pub source: usize,
    /// The class of its source.
    pub class: Option<Retention>,
    /// Where its source was in the request's view.
    pub fate: Fate,
}

/// The spans `run` lost, in step order.
pub fn lost(run: &Run, prepared: &Prepared) -> Vec<LostSpan> {
    let mut out = Vec::new();
    for (n, step) in run.steps.iter().enumerate() {
        for o in step.spans.iter().filter(|o| !o.survived) {
            let Some(span) = prepared.spans(step.message).get(o.span) else {
                continue;
            };
            out.push(LostSpan {
                step: n,
                text: span.text.clone(),
                source: o.source,
                class: class_of(prepared, o.source),
                fate: o.fate,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;
