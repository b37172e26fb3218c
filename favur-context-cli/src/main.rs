//! `favur-context`: replay recorded agent transcripts through a retention policy.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Measure what a retention policy keeps, on your own recorded transcripts.
#[derive(Debug, Parser)]
#[command(name = "favur-context", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Replay transcripts step by step under a policy and the baselines, and report.
    Replay(favur_context_cli::wiring::ReplayArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Replay(args) => match favur_context_cli::wiring::replay_command(&args) {
            Ok(report) => {
                print!("{report}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
    }
}
