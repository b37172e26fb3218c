//! `favur-context`: replay recorded agent transcripts through a retention policy.

fn main() -> std::process::ExitCode {
    favur_context_cli::main()
}
