//! The `replay` command: everything the binary does, as a function the tests can call.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use favur_context::compact::Tier;
use favur_context::import::rules::Rules;
use serde_json::Value;

use crate::ReplayError;
use crate::cache_bill::Bill;
use crate::replay::{Prepared, Renderer, Run, replay};
use crate::report::cache_table;
use crate::report::{COST_MODEL, Row, Summary, breakdown, side_by_side};
use crate::search::{match_mask, match_trim};
use crate::span_tally::{LostSpan, lost};
use crate::strategy::{MaskOld, NoCompaction, Strategy, TrimOldest};
use crate::suggest::misclassification;
use crate::svg::{Panel, draw};

/// Builds a fresh instance of the policy under test for each transcript. See [`run`] for an
/// example.
pub type PolicyFactory<'a> = dyn Fn() -> Result<Box<dyn Strategy>, ReplayError> + Sync + 'a;

/// What to replay and where to write. See [`run`] for an example.
pub struct Job<'a> {
    /// The transcripts, classified.
    pub transcripts: &'a [Prepared],
    /// The policy under test.
    pub policy: &'a PolicyFactory<'a>,
    /// The renderer.
    pub renderer: &'a (dyn Renderer + Sync),
    /// The model's context window in tokens (for the chart's thresholds).
    pub window: u64,
    /// Where to write every rendered request of the policy run, as JSON lines.
    pub dump: Option<PathBuf>,
    /// Where to draw the chart.
    pub svg: Option<PathBuf>,
    /// Whether to replay the baselines too.
    pub baselines: bool,
}

/// The figures of a replay. See [`run`] for an example.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Per transcript: policy first, then the baselines.
    pub rows: Vec<Row>,
    /// Totals over all transcripts, in the same order.
    pub totals: Vec<Summary>,
    /// The policy's runs, per transcript.
    pub policy_runs: Vec<Run>,
    /// With a dump: the spans the policy lost, per transcript (its id first).
    pub lost_spans: Option<Vec<(String, Vec<LostSpan>)>>,
}

struct PerTranscript {
    summaries: Vec<Summary>,
    policy_run: Run,
    dump: Vec<String>,
    lost: Vec<LostSpan>,
}

fn one(job: &Job<'_>, p: &Prepared) -> Result<PerTranscript, ReplayError> {
    let id = p.transcript().id.clone();
    let mut dump = Vec::new();
    let mut policy = (job.policy)()?;
    let want_dump = job.dump.is_some();
    let run = replay(
        p,
        policy.as_mut(),
        Some(job.renderer),
        &mut |step, request| {
            if want_dump {
                dump.push(dump_line(&id, step, request));
            }
            Ok(())
        },
    )?;
    let lost = if want_dump { lost(&run, p) } else { Vec::new() };
    let mut summaries = vec![Summary::of(&run, p)];
    if job.baselines {
        let target = run.mean_tokens();
        let (budget, _) = match_trim(p, target)?;
        let (keep, _) = match_mask(p, target)?;
        let mut strategies: Vec<Box<dyn Strategy>> = vec![
            Box::new(NoCompaction),
            Box::new(TrimOldest { budget }),
            Box::new(MaskOld::new(keep)),
        ];
        for s in &mut strategies {
            let r = replay(p, s.as_mut(), Some(job.renderer), &mut |_, _| Ok(()))?;
            summaries.push(Summary::of(&r, p));
        }
    }
    Ok(PerTranscript {
        summaries,
        policy_run: run,
        dump,
        lost,
    })
}

/// Replays every transcript under the policy and the baselines, writes the dump and the
/// chart if asked, and returns the figures.
pub fn run(job: &Job<'_>) -> Result<Outcome, ReplayError> {
    // Two worker threads: transcripts are independent.
    let results: Vec<Result<PerTranscript, ReplayError>> = std::thread::scope(|scope| {
        let workers = 2usize.min(job.transcripts.len().max(1));
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                scope.spawn(move || {
                    job.transcripts
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| i % workers == w)
                        .map(|(i, p)| (i, one(job, p)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<(usize, Result<PerTranscript, ReplayError>)> = Vec::new();
        for h in handles {
            match h.join() {
                Ok(v) => all.extend(v),
                Err(_) => all.push((usize::MAX, Err(ReplayError::Internal("a worker panicked")))),
            }
        }
        all.sort_by_key(|(i, _)| *i);
        all.into_iter().map(|(_, r)| r).collect()
    });
    let mut rows = Vec::new();
    let mut totals: Vec<Summary> = Vec::new();
    let mut policy_runs = Vec::new();
    let mut dump_lines = Vec::new();
    let mut lost_spans = Vec::new();
    for (p, r) in job.transcripts.iter().zip(results) {
        let r = r?;
        if totals.is_empty() {
            totals = r
                .summaries
                .iter()
                .map(|s| Summary {
                    label: base_label(&s.label),
                    ..Summary::default()
                })
                .collect();
        }
        for (t, s) in totals.iter_mut().zip(&r.summaries) {
            t.merge(s);
        }
        rows.push(Row {
            transcript: p.transcript().id.clone(),
            summaries: r.summaries,
        });
        policy_runs.push(r.policy_run);
        dump_lines.extend(r.dump);
        lost_spans.push((p.transcript().id.clone(), r.lost));
    }
    if let Some(path) = &job.dump {
        write_dump(path, &dump_lines)?;
    }
    if let Some(path) = &job.svg {
        let panels: Vec<Panel<'_>> = job
            .transcripts
            .iter()
            .zip(&policy_runs)
            .map(|(p, run)| Panel {
                title: &p.transcript().id,
                run,
            })
            .collect();
        draw(path, &panels, job.window)?;
    }
    Ok(Outcome {
        rows,
        totals,
        policy_runs,
        lost_spans: job.dump.is_some().then_some(lost_spans),
    })
}

/// Writes the dump's lines to `path`.
fn write_dump(path: &std::path::Path, lines: &[String]) -> Result<(), ReplayError> {
    let write_err = |source| ReplayError::Write {
        what: format!("dump {}", path.display()),
        source,
    };
    let file = std::fs::File::create(path).map_err(write_err)?;
    let mut w = std::io::BufWriter::new(file);
    for line in lines {
        writeln!(w, "{line}").map_err(write_err)?;
    }
    w.flush().map_err(write_err)
}

/// A strategy's label without its per-transcript parameter ("trim-oldest (budget 9000)"
/// becomes "trim-oldest").
fn base_label(label: &str) -> String {
    label.split(" (").next().unwrap_or(label).to_owned()
}

/// The whole text report: the side-by-side table (per transcript and total), the cost
/// model, the breakdown by class and rule, and the misclassification report.
///
/// See [`run`] for an example.
pub fn render_report(outcome: &Outcome, rules: &Rules, tiers: &[Tier]) -> String {
    let mut out = String::new();
    let mut rows = outcome.rows.clone();
    rows.push(Row {
        transcript: "**TOTAL**".to_owned(),
        summaries: outcome.totals.clone(),
    });
    out.push_str("## Side by side\n\n");
    out.push_str(&side_by_side(&rows));
    let _ = writeln!(out, "\n{COST_MODEL}.");
    if let Some(policy) = outcome.totals.first() {
        let _ = writeln!(
            out,
            "cached prefix: the mean over requests of the share of each request's tokens a prompt cache with Anthropic's rules covers, breakpoints placed by `render_anthropic_cached` (at most 4, where the prefix is stable; hits up to 20 blocks before a breakpoint); {}: {:.1}%.",
            policy.label,
            policy.cached_share() * 100.0
        );
    }
    out.push_str("Baselines are replayed at the policy's mean request tokens per transcript: the trim budget and the mask N are searched (bisection) for the mean closest to the policy's; no compaction is the unconstrained reference.\n");
    out.push_str("Spans kept: exact-text spans (quoted strings and command lines of 16+ characters the agent typed after they first appeared in a tool output) verbatim in the request (docs/replay.md).\n");
    out.push_str("\n## Cache per compaction (policy run)\n\n");
    out.push_str(&cache_table(&rows));
    out.push_str("\nRe-billed: the tokens of each request right after a compaction from its first changed message on (cache writes, full price); cache reads: its unchanged prefix (10%).\n");
    out.push_str("\n## Reference and span survival by source (all transcripts)\n\n");
    out.push_str(&breakdown(&outcome.totals, rules));
    if let Some(policy) = outcome.totals.first() {
        out.push_str("\n## Misclassification report (policy run, all transcripts)\n\n");
        out.push_str(&misclassification(policy, rules, tiers));
    }
    if let Some(lost) = &outcome.lost_spans {
        out.push_str(&dump_details(outcome, lost));
    }
    if outcome.rows.len() > 1 {
        out.push_str("\n## Reference and span survival by source, per transcript\n");
        for row in &outcome.rows {
            let _ = write!(out, "\n### {}\n\n", row.transcript);
            out.push_str(&breakdown(&row.summaries, rules));
        }
    }
    out
}

/// With a dump: every compaction of the policy run with its cache figures, and every span
/// it lost (request number, source message, class, text).
fn dump_details(outcome: &Outcome, lost: &[(String, Vec<LostSpan>)]) -> String {
    let mut out = String::from(
        "\n## Compactions of the policy run\n\n| transcript | step | tier | request tok | re-billed (cache writes) | cache reads |\n|---|---:|---:|---:|---:|---:|\n",
    );
    for (row, run) in outcome.rows.iter().zip(&outcome.policy_runs) {
        for b in Bill::all(run) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {:.0} | {:.0} |",
                row.transcript,
                b.step,
                // A baseline's trim or mask has no tier: printed as 0, as before.
                b.tier.map_or(0, std::num::NonZeroU8::get),
                b.tokens,
                b.rebilled,
                b.reads
            );
        }
    }
    out.push_str("\n## Spans the policy lost\n\n| transcript | step | source message | class | source then | span |\n|---|---:|---:|---|---|---|\n");
    for (id, spans) in lost {
        for l in spans {
            let class = l.class.map_or("?", favur_context::Retention::as_str);
            let text = l.text.replace('|', "\\|").replace('`', "'");
            let fate = format!("{:?}", l.fate).to_lowercase();
            let _ = writeln!(
                out,
                "| {id} | {} | {} | {class} | {fate} | `{text}` |",
                l.step, l.source
            );
        }
    }
    out
}

/// The dump line for one request (what `--dump` writes, one per line).
pub fn dump_line(transcript: &str, step: usize, request: &Value) -> String {
    // A struct, so the keys keep this order whatever serde_json's map does.
    #[derive(serde::Serialize)]
    struct Line<'a> {
        transcript: &'a str,
        step: usize,
        request: &'a Value,
    }
    serde_json::to_string(&Line {
        transcript,
        step,
        request,
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests;
