//! The `favur-context` command line: its subcommands, parsed and dispatched.

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
    Replay(crate::wiring::ReplayArgs),
    /// Per call site (or rule): what it appended, what became of it, and the regret it
    /// cost, with the evidence behind each suggested class change.
    Audit(crate::audit::AuditArgs),
    /// List every retention classification site of a Rust codebase; check or write a
    /// lockfile of them.
    Sites(crate::sites::SitesArgs),
    /// Write one history (journal, saved history or replayed transcript) as an HTML page:
    /// its sites, regret events and entries.
    Inspect(crate::inspect::InspectArgs),
}

/// Runs the `favur-context` command on the process's arguments: what the binary's
/// `main` does.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Replay(args) => match crate::wiring::replay_command(&args) {
            Ok(report) => {
                print!("{report}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Command::Sites(args) => match crate::sites::sites_command(&args) {
            Ok(out) => {
                print!("{}", out.stdout);
                eprint!("{}", out.stderr);
                if out.success {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Command::Inspect(args) => match crate::inspect::inspect_command(&args) {
            Ok(message) => {
                print!("{message}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Command::Audit(args) => match crate::audit::audit_command(&args) {
            Ok(report) => {
                if args.json {
                    println!("{}", crate::audit::render_json(&report));
                } else {
                    print!("{}", crate::audit::render_text(&report));
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
    }
}
