//! What a compaction costs the prompt cache: the request right after it is billed in full
//! from its first changed item on (a cache write), and only the unchanged prefix before
//! that item is read from the cache at [`REUSED_PRICE`](crate::report::REUSED_PRICE).
//!
//! The figures use the replay's effective-cost model (whole rendered messages compared
//! byte for byte with the previous request): for the request after a compaction of
//! `tokens` tokens whose unchanged prefix is the share `reuse`, the cache reads are
//! `tokens x reuse` and the re-billed tokens (cache writes) `tokens x (1 - reuse)`.

use std::num::NonZeroU8;

use crate::replay::{Run, Step};

/// The cache figures of the requests right after a compaction, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CompactionCache {
    /// Compactions (requests right after one).
    pub compactions: u64,
    /// Tokens re-billed: those after the unchanged prefix (the cache writes).
    pub rebilled: f64,
    /// Tokens of the unchanged prefix (the cache reads).
    pub reads: f64,
}

impl CompactionCache {
    /// Counts `step` if a compaction came right before it.
    ///
    /// See [`CompactionCache`] for an example.
    pub fn add_step(&mut self, step: &Step) {
        if let Some(bill) = Bill::of(0, step) {
            self.compactions += 1;
            self.rebilled += bill.rebilled;
            self.reads += bill.reads;
        }
    }

    /// Adds another summary's figures (for totals).
    pub fn merge(&mut self, o: &CompactionCache) {
        self.compactions += o.compactions;
        self.rebilled += o.rebilled;
        self.reads += o.reads;
    }

    /// Mean tokens re-billed per compaction (0 without any).
    pub fn rebilled_each(&self) -> f64 {
        if self.compactions == 0 {
            0.0
        } else {
            self.rebilled / self.compactions as f64
        }
    }
}

/// One compaction's cache figures: what the request right after it re-billed and read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bill {
    /// The request number in its transcript (from 0).
    pub step: usize,
    /// The tier that fired (`None` for a baseline).
    pub tier: Option<NonZeroU8>,
    /// The request's tokens.
    pub tokens: u64,
    /// Tokens after the unchanged prefix (cache writes).
    pub rebilled: f64,
    /// Tokens of the unchanged prefix (cache reads).
    pub reads: f64,
}

impl Bill {
    /// The figures of request number `n`, `step`, if a compaction came right before it.
    ///
    /// See [`Bill`] for an example.
    pub fn of(n: usize, step: &Step) -> Option<Bill> {
        let event = step.event?;
        let tokens = step.tokens as f64;
        Some(Bill {
            step: n,
            tier: event.tier,
            tokens: step.tokens,
            rebilled: tokens * (1.0 - step.reuse),
            reads: tokens * step.reuse,
        })
    }

    /// Every compaction of `run`, in order.
    pub fn all(run: &Run) -> Vec<Bill> {
        let steps = run.steps.iter().enumerate();
        steps.filter_map(|(n, s)| Bill::of(n, s)).collect()
    }
}

#[cfg(test)]
mod tests;
