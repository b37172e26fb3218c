use favur_context::Policy;

use super::{Job, dump_line, render_report, run};
use crate::ReplayError;
use crate::engine::{LibRenderer, PolicyStrategy};
use crate::strategy::Strategy;
use crate::tests::common::{four_turns, rules};

#[test]
fn a_run_reports_the_policy_and_three_baselines() -> Result<(), ReplayError> {
    let rules = rules("fuzzy");
    let policy = Policy::default();
    let factory = || -> Result<Box<dyn Strategy>, ReplayError> {
        Ok(Box::new(PolicyStrategy::new(
            policy.clone(),
            Default::default(),
        )))
    };
    let transcripts = [four_turns()];
    let job = Job {
        transcripts: &transcripts,
        policy: &factory,
        renderer: &LibRenderer::default(),
        window: policy.window_tokens(),
        dump: None,
        svg: None,
        baselines: true,
    };
    let outcome = run(&job)?;
    assert_eq!(outcome.totals.len(), 4);
    assert!(render_report(&outcome, &rules, policy.tiers()).contains("| hand | policy | 2 |"));
    Ok(())
}

#[test]
fn a_dump_line_is_one_json_object() {
    let line = dump_line("t", 3, &serde_json::json!([]));
    assert_eq!(line, r#"{"transcript":"t","step":3,"request":[]}"#);
}
