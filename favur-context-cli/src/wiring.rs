//! The command line: arguments, and the wiring of the library's engine and renderer into
//! the replay.

use std::path::PathBuf;

use clap::Args;
use favur_context::rules::{Rules, RulesError, Unmatched};

use crate::ReplayError;
use crate::cli::{Job, render_report, run};
use crate::replay::Prepared;
use crate::transcript::{ClassifiedTranscript, TranscriptError, load};

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
    /// The model's context window in tokens.
    #[arg(long, default_value_t = 200_000)]
    pub window: u64,
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
}

/// Why the command failed.
///
/// ```
/// let e = favur_context_cli::wiring::CliError::Policy("no such file".into());
/// assert_eq!(e.to_string(), "policy: no such file");
/// ```
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The rules file was rejected.
    #[error("{}: {source}", path.display())]
    Rules {
        /// The rules file.
        path: PathBuf,
        /// What is wrong.
        source: RulesError,
    },
    /// A transcript could not be loaded.
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
    /// A transcript has messages no rule matched.
    #[error("{}: {source}", path.display())]
    Unmatched {
        /// The transcript.
        path: PathBuf,
        /// The messages.
        source: Unmatched,
    },
    /// The policy could not be loaded.
    #[error("policy: {0}")]
    Policy(String),
    /// The replay failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
}

/// Runs `favur-context replay` and returns the report text.
///
/// ```no_run
/// use clap::Parser;
/// #[derive(Parser)]
/// struct A { #[command(flatten)] r: favur_context_cli::wiring::ReplayArgs }
/// let a = A::parse_from(["x", "t.json", "--rules", "r.toml", "--policy", "default"]);
/// let report = favur_context_cli::wiring::replay_command(&a.r)?;
/// # Ok::<(), favur_context_cli::wiring::CliError>(())
/// ```
pub fn replay_command(args: &ReplayArgs) -> Result<String, CliError> {
    let rules = Rules::load(&args.rules).map_err(|source| CliError::Rules {
        path: args.rules.clone(),
        source,
    })?;
    let mut prepared = Vec::with_capacity(args.transcripts.len());
    for path in &args.transcripts {
        let t = load(path)?;
        let c =
            ClassifiedTranscript::classify(t, &rules).map_err(|source| CliError::Unmatched {
                path: path.clone(),
                source,
            })?;
        prepared.push(Prepared::new(c));
    }
    let factory = crate::engine::policy_factory(&args.policy, args.window)?;
    let renderer = crate::engine::renderer();
    let job = Job {
        transcripts: &prepared,
        rules: &rules,
        policy: &*factory,
        renderer: &renderer,
        window: args.window,
        dump: args.dump.clone(),
        svg: args.svg.clone(),
        baselines: !args.no_baselines,
    };
    let outcome = run(&job)?;
    let mut report = format!(
        "# favur-context replay: {} transcript(s), policy `{}`, window {} tokens, rules {}\n\n",
        prepared.len(),
        args.policy,
        args.window,
        args.rules.display()
    );
    report.push_str(&render_report(&outcome, &rules));
    Ok(report)
}
