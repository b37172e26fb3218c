//! The command line: arguments, and the wiring of the library's engine and renderer into
//! the replay.

use std::path::PathBuf;

use clap::Args;
use favur_context::Policy;
use favur_context::compact::BuiltinSummarizer;
use favur_context::import::Format;
use favur_context::import::rules::{Rules, RulesError};

use crate::ReplayError;
use crate::cli::{Job, render_report, run};
use crate::engine::{LibRenderer, PolicyStrategy, RequestFormat};
use crate::replay::Prepared;
use crate::strategy::Strategy;
use crate::transcript::{TranscriptError, load};

/// Arguments of `favur-context replay`.
#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// Transcript files (JSON: the shared traces' schema, OpenAI chat, mini-swe-agent).
    #[arg(required = true)]
    pub transcripts: Vec<PathBuf>,
    /// The rules file that classifies every message (TOML).
    #[arg(long)]
    pub rules: PathBuf,
    /// The compaction policy: a TOML or JSON policy file, or `default` for the design's
    /// defaults.
    #[arg(long)]
    pub policy: String,
    /// The model's context window in tokens (overrides the policy file's; default
    /// 200000).
    #[arg(long)]
    pub window: Option<u64>,
    /// Override the policy's `keep_recent` (the last K consumed exchanges stay verbatim).
    #[arg(long)]
    pub keep_recent: Option<usize>,
    /// Use the built-in summarizer without its identifier list (to measure what the list
    /// keeps).
    #[arg(long)]
    pub no_summary_identifiers: bool,
    /// The transcripts' format (detected per file when not given).
    #[arg(long, value_enum)]
    pub format: Option<InputFormat>,
    /// The request format rendered (and dumped).
    #[arg(long, value_enum, default_value_t = RequestFormat::OpenAi)]
    pub render: RequestFormat,
    /// Write every rendered request of the policy run as JSON lines
    /// `{transcript, step, request}`.
    #[arg(long)]
    pub dump: Option<PathBuf>,
    /// Draw usage over the steps, per transcript, as an SVG chart.
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Skip the baselines (policy figures only).
    #[arg(long)]
    pub no_baselines: bool,
    /// Replay at windows 100k, 150k, 200k and 300k (the policy's tiers as fractions, the
    /// window changed) with every baseline, print the frontier as a table and draw it
    /// (to `--sweep-svg`, else `--svg`).
    #[arg(long, conflicts_with_all = ["window", "dump", "no_baselines"])]
    pub sweep: bool,
    /// Where `--sweep` draws its chart (mean tokens against span and reference survival).
    #[arg(long, requires = "sweep")]
    pub sweep_svg: Option<PathBuf>,
}

/// A transcript format, for `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFormat {
    /// OpenAI Chat Completions messages.
    #[value(name = "openai")]
    OpenAi,
    /// Anthropic Messages.
    #[value(name = "anthropic")]
    Anthropic,
    /// A mini-swe-agent trajectory (plain chat or tool calling).
    #[value(name = "mini-swe-agent")]
    MiniSweAgent,
    /// Gemini `contents` (with an optional `systemInstruction`).
    #[value(name = "gemini")]
    Gemini,
    /// OpenAI Responses items (a list, or an object with `input`/`output`).
    #[value(name = "responses")]
    Responses,
}

impl From<InputFormat> for Format {
    fn from(f: InputFormat) -> Format {
        match f {
            InputFormat::OpenAi => Format::OpenAi,
            InputFormat::Anthropic => Format::Anthropic,
            InputFormat::MiniSweAgent => Format::MiniSweAgent,
            InputFormat::Gemini => Format::Gemini,
            InputFormat::Responses => Format::Responses,
        }
    }
}

/// Loads the policy named on the command line (`default` or a TOML/JSON file), with the
/// window and `keep_recent` overrides applied.
pub fn load_policy(
    policy: &str,
    window: Option<u64>,
    keep_recent: Option<usize>,
) -> Result<Policy, CliError> {
    let base = if policy == "default" {
        Policy::default()
    } else {
        Policy::load(policy).map_err(|e| CliError::Policy(format!("{policy}: {e}")))?
    };
    if window.is_none() && keep_recent.is_none() {
        return Ok(base);
    }
    // Overrides go through the serde form, so they are validated like a file.
    let mut value: serde_json::Value = serde_json::from_str(&base.to_json_string())
        .map_err(|e| CliError::Policy(e.to_string()))?;
    if let Some(w) = window {
        value["window_tokens"] = w.into();
    }
    if let Some(k) = keep_recent {
        value["keep_recent"] = k.into();
    }
    Policy::from_json_str(&value.to_string())
        .map_err(|e| CliError::Policy(format!("{policy} with the command-line overrides: {e}")))
}

/// Why the command failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The rules file was rejected.
    #[error("{}", rules_message(path, source))]
    Rules {
        /// The rules file.
        path: PathBuf,
        /// What is wrong.
        source: RulesError,
    },
    /// A transcript could not be loaded, imported or classified.
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
    /// The policy could not be loaded.
    #[error("policy: {0}")]
    Policy(String),
    /// The replay failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
}

/// A rules error prefixed with the file, unless it already names it.
fn rules_message(path: &std::path::Path, source: &RulesError) -> String {
    match source {
        RulesError::Io { .. } => source.to_string(),
        other => format!("{}: {other}", path.display()),
    }
}

/// Runs `favur-context replay` and returns the report text.
pub fn replay_command(args: &ReplayArgs) -> Result<String, CliError> {
    let rules = Rules::load(&args.rules).map_err(|source| CliError::Rules {
        path: args.rules.clone(),
        source,
    })?;
    let policy = load_policy(&args.policy, args.window, args.keep_recent)?;
    let mut prepared = Vec::with_capacity(args.transcripts.len());
    for path in &args.transcripts {
        let t = load(path, args.format.map(Format::from), &rules)?;
        prepared.push(Prepared::new(t));
    }
    let summarizer = if args.no_summary_identifiers {
        BuiltinSummarizer {
            max_identifiers: 0,
            ..BuiltinSummarizer::default()
        }
    } else {
        BuiltinSummarizer::default()
    };
    if args.sweep {
        return sweep_command(args, &prepared, &summarizer);
    }
    let factory = || -> Result<Box<dyn Strategy>, ReplayError> {
        Ok(Box::new(PolicyStrategy::new(
            policy.clone(),
            summarizer.clone(),
        )))
    };
    let renderer = LibRenderer(args.render);
    let window = policy.window_tokens();
    let job = Job {
        transcripts: &prepared,
        policy: &factory,
        renderer: &renderer,
        window,
        dump: args.dump.clone(),
        svg: args.svg.clone(),
        baselines: !args.no_baselines,
    };
    let outcome = run(&job)?;
    let mut report = format!(
        "# favur-context replay: {} transcript(s), policy `{}` (keep_recent {}), window {} tokens, rules {}, summarizer {}\n\n",
        prepared.len(),
        args.policy,
        policy.keep_recent(),
        window,
        args.rules.display(),
        if args.no_summary_identifiers {
            "built-in without identifier list"
        } else {
            "built-in"
        },
    );
    report.push_str(&render_report(&outcome, &rules, policy.tiers()));
    Ok(report)
}

/// `replay --sweep`: the policy and the baselines at every window of
/// [`WINDOWS`](crate::sweep::WINDOWS); returns the report (the table) and draws the chart.
fn sweep_command(
    args: &ReplayArgs,
    prepared: &[Prepared],
    summarizer: &BuiltinSummarizer,
) -> Result<String, CliError> {
    let renderer = LibRenderer(args.render);
    let mut points = Vec::new();
    for window in crate::sweep::WINDOWS {
        let policy = load_policy(&args.policy, Some(window), args.keep_recent)?;
        let factory = || -> Result<Box<dyn Strategy>, ReplayError> {
            Ok(Box::new(PolicyStrategy::new(
                policy.clone(),
                summarizer.clone(),
            )))
        };
        let job = Job {
            transcripts: prepared,
            policy: &factory,
            renderer: &renderer,
            window,
            dump: None,
            svg: None,
            baselines: true,
        };
        let outcome = run(&job)?;
        points.extend(crate::sweep::points(window, &outcome.totals));
    }
    if let Some(path) = args.sweep_svg.as_ref().or(args.svg.as_ref()) {
        crate::sweep_svg::draw_sweep(path, &points)?;
    }
    Ok(format!(
        "# favur-context replay --sweep: {} transcript(s), policy `{}` (its tiers at each window), rules {}\n\n{}\nspans, refs: survival over all transcripts; cost×: effective cost over no compaction's at the same window; baselines matched to the policy's mean tokens per transcript.\n",
        prepared.len(),
        args.policy,
        args.rules.display(),
        crate::sweep::table(&points),
    ))
}

#[cfg(test)]
mod tests;
