//! The prompt cache a provider with Anthropic's rules would keep across a replay: each
//! request rendered with its breakpoints ([`render_anthropic_cached`]), the
//! prefixes ending at them written to the cache, and the share of each request's tokens
//! that a prefix cached by an earlier request covers.
//!
//! Anthropic's rules, as modelled: a prefix is cached at each breakpoint of a request; a
//! later request hits the longest cached prefix that ends at one of its own breakpoints
//! or up to 20 blocks before one; a prefix is compared block by block, byte for byte
//! (the markers themselves aside). Entries never expire here (a replay has no clock).

use std::collections::HashSet;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use favur_context::History;
use favur_context::render::{BlockAt, render_anthropic_cached};
use favur_context::tokens::{HeuristicCounter, TokenCounter};
use serde_json::Value;

use crate::blocks::collect_strings;

/// How many blocks before a breakpoint Anthropic looks for a cached prefix.
pub const LOOKBACK_BLOCKS: usize = 20;

/// The prefixes cached so far in one replay.
#[derive(Debug, Default, Clone)]
pub struct PrefixCache {
    written: HashSet<u64>,
}

impl PrefixCache {
    /// Renders the request for `history` with its breakpoints, and returns the share of
    /// its tokens that a prefix cached by an earlier request covers; then caches its own
    /// prefixes.
    ///
    /// See [`PrefixCache`] for an example.
    pub fn measure(&mut self, history: &History) -> f64 {
        let (request, placement) = render_anthropic_cached(history);
        // Rolling hashes of the prefixes, block by block, and each block's tokens.
        let mut prefix = Vec::new();
        let mut weights = Vec::new();
        let mut ends = Vec::new();
        let mut hasher = DefaultHasher::new();
        let mut push = |at: BlockAt, role: &str, first: bool, block: &Value| {
            let mut b = block.clone();
            if let Value::Object(o) = &mut b {
                o.remove("cache_control");
            }
            (role, first, b.to_string()).hash(&mut hasher);
            prefix.push(hasher.finish());
            let mut text = String::new();
            collect_strings(&b, &mut text);
            weights.push(u64::from(HeuristicCounter.count_text(&text)) + 1);
            if placement.breakpoints.contains(&at) {
                ends.push(prefix.len());
            }
        };
        for (i, b) in request.system.iter().enumerate() {
            push(BlockAt::System(i), "system", i == 0, b);
        }
        for (m, turn) in request.messages.iter().enumerate() {
            let role = turn.get("role").and_then(Value::as_str).unwrap_or("");
            for (k, b) in turn
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                push(
                    BlockAt::Message {
                        message: m,
                        block: k,
                    },
                    role,
                    k == 0,
                    b,
                );
            }
        }
        let total: u64 = weights.iter().sum();
        let mut hit = 0usize;
        for &end in &ends {
            let low = end.saturating_sub(LOOKBACK_BLOCKS).max(1);
            if let Some(len) = (low..=end)
                .rev()
                .find(|len| self.written.contains(&prefix[len - 1]))
            {
                hit = hit.max(len);
            }
        }
        for &end in &ends {
            self.written.insert(prefix[end - 1]);
        }
        if total == 0 {
            0.0
        } else {
            weights[..hit].iter().sum::<u64>() as f64 / total as f64
        }
    }
}

#[cfg(test)]
mod tests;
