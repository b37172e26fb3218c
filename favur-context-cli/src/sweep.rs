//! `replay --sweep`: the same policy (its tiers as fractions of the window) and the
//! baselines replayed at several windows, and the frontier they draw: mean request tokens
//! against span survival and reference survival, each point with its effective cost
//! relative to no compaction.

use std::fmt::Write as _;

use crate::report::Summary;

/// The windows a sweep replays.
///
/// ```
/// assert_eq!(favur_context_cli::sweep::WINDOWS, [100_000, 150_000, 200_000, 300_000]);
/// ```
pub const WINDOWS: [u64; 4] = [100_000, 150_000, 200_000, 300_000];

/// One strategy at one window of a sweep.
///
/// ```
/// use favur_context_cli::sweep::Point;
/// let p = Point { window: 100_000, label: "policy".into(), mean_tokens: 9000.0, spans: Some(0.9), refs: Some(0.98), cost: Some(0.6) };
/// assert_eq!(p.window, 100_000);
/// ```
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
///
/// ```
/// use favur_context_cli::report::Summary;
/// use favur_context_cli::sweep::points;
/// let policy = Summary { label: "policy".into(), requests: 2, total_tokens: 60, ..Summary::default() };
/// let none = Summary { label: "no compaction".into(), requests: 2, total_tokens: 100, ..Summary::default() };
/// let p = points(150_000, &[policy, none]);
/// assert_eq!((p[0].mean_tokens, p[0].cost), (30.0, Some(0.6)));
/// assert_eq!(p[1].cost, Some(1.0));
/// ```
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
///
/// ```
/// use favur_context_cli::sweep::{table, Point};
/// let p = Point { window: 200_000, label: "policy".into(), mean_tokens: 10476.0, spans: Some(0.923), refs: Some(0.981), cost: Some(0.671) };
/// assert!(table(&[p]).contains("| 200k | policy | 10476 | 0.923 | 0.981 | 0.671 |"));
/// ```
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
