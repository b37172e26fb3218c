//! Replays every shared trace with the shipped rules file.

mod common;

use std::time::Instant;

use favur_context::rules::Rules;
use favur_context_cli::cli::{Job, render_report, run};
use favur_context_cli::replay::Prepared;
use favur_context_cli::strategy::{Strategy, TrimOldest};
use favur_context_cli::transcript::{ClassifiedTranscript, load};

const RULES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../rules/coding-agent-shell.toml"
);

#[test]
fn shipped_rules_replay_every_trace() {
    let Some(dir) = common::traces_dir() else {
        return;
    };
    let rules = Rules::load(RULES).expect("shipped rules parse");
    let start = Instant::now();
    let prepared: Vec<Prepared> = common::trace_files(&dir)
        .iter()
        .map(|p| {
            let t = load(p).expect("trace loads");
            Prepared::new(
                ClassifiedTranscript::classify(t, &rules).expect("every message classified"),
            )
        })
        .collect();
    assert!(!prepared.is_empty());
    let factory = || -> Result<Box<dyn Strategy>, favur_context_cli::ReplayError> {
        Ok(Box::new(TrimOldest { budget: 20_000 }))
    };
    let job = Job {
        transcripts: &prepared,
        rules: &rules,
        policy: &factory,
        renderer: &common::PlainRenderer,
        window: 200_000,
        dump: None,
        svg: Some(std::env::temp_dir().join("favur-traces-test.svg")),
        baselines: true,
    };
    let outcome = run(&job).expect("replay runs");
    println!("{}", render_report(&outcome, &rules));
    println!("elapsed {:?}", start.elapsed());
}
