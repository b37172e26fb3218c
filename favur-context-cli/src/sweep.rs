//! `replay --sweep`: the same policy (its tiers as fractions of the window) and the
//! baselines replayed at several windows, and the frontier they draw: mean request tokens
//! against span survival and reference survival, each point with its effective cost
//! relative to no compaction.

use std::fmt::Write as _;

use crate::report::Summary;

/// The windows a sweep replays.
pub const WINDOWS: [u64; 4] = [100_000, 150_000, 200_000, 300_000];

/// One strategy at one window of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The window, in tokens.
    pub window: u64,
    /// The strategy ("policy", "trim-oldest", "mask-old", "no compaction").
    pub label: String,
    /// Mean request tokens over every request of every transcript.
    pub mean_tokens: f64,
    /// Span survival, if any span was counted.
    pub spans: Option<f64>,
    /// Reference survival, if any reference was counted.
    pub refs: Option<f64>,
    /// Effective cost relative to no compaction at the same window.
    pub cost: Option<f64>,
}

/// The points of one window: each strategy's totals over all transcripts (the policy
/// first, as [`run`](crate::cli::run) returns them).
pub fn points(window: u64, totals: &[Summary]) -> Vec<Point> {
    let none = totals
        .iter()
        .find(|s| s.label.starts_with("no compaction"))
        .map(Summary::effective_cost)
        .filter(|c| *c > 0.0);
    totals
        .iter()
        .map(|s| Point {
            window,
            label: s.label.clone(),
            mean_tokens: s.mean_tokens(),
            spans: s.spans.all.share(),
            refs: s.refs.share(),
            cost: none.map(|n| s.effective_cost() / n),
        })
        .collect()
}

fn share(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_owned(), |x| format!("{x:.3}"))
}

/// The sweep as a Markdown table: window | strategy | mean tokens | spans | refs | cost×.
pub fn table(points: &[Point]) -> String {
    let mut out = String::from(
        "| window | strategy | mean tokens | spans | refs | cost× |\n|---|---|---:|---:|---:|---:|\n",
    );
    for p in points {
        let _ = writeln!(
            out,
            "| {}k | {} | {:.0} | {} | {} | {} |",
            p.window / 1000,
            p.label,
            p.mean_tokens,
            share(p.spans),
            share(p.refs),
            share(p.cost),
        );
    }
    out
}

#[cfg(test)]
mod tests;
