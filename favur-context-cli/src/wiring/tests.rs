use clap::Parser;

use super::{ReplayArgs, load_policy};

#[derive(Parser)]
struct A {
    #[command(flatten)]
    r: ReplayArgs,
}

#[test]
fn replay_flags_parse_and_leave_unset_options_to_the_policy() {
    let a = A::parse_from([
        "x",
        "t.json",
        "--rules",
        "r.toml",
        "--policy",
        "default",
        "--keep-recent",
        "2",
    ]);
    assert_eq!((a.r.keep_recent, a.r.window), (Some(2), None));
}

#[test]
fn the_window_and_recent_turns_override_the_policy_file() -> Result<(), super::CliError> {
    let p = load_policy("default", Some(100_000), Some(2))?;
    assert_eq!((p.window_tokens(), p.keep_recent()), (100_000, 2));
    Ok(())
}
