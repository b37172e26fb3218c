use super::load_policy;

#[test]
fn the_window_and_recent_turns_override_the_policy_file() -> Result<(), super::CliError> {
    let p = load_policy("default", Some(100_000), Some(2))?;
    assert_eq!((p.window_tokens(), p.keep_recent()), (100_000, 2));
    Ok(())
}

#[test]
fn keep_recent_parses_and_an_unset_window_is_left_to_the_policy() {
    use clap::Parser;
    #[derive(Parser)]
    struct A {
        #[command(flatten)]
        r: super::ReplayArgs,
    }
    let argv = "x t.json --rules r.toml --policy default --keep-recent 2".split(' ');
    let a = A::parse_from(argv);
    assert_eq!((a.r.keep_recent, a.r.window), (Some(2), None));
}
