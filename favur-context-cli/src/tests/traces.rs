//! Replays every shared trace with the shipped rules file, the default policy and a
//! 200k-token window, as `docs/replay.md` does. Skips (with a message) where the traces
//! folder is absent; `FAVUR_TRACES` points elsewhere.

use super::common;

use crate::engine::{LibRenderer, PolicyStrategy, RequestFormat};
use crate::replay::{Prepared, replay};
use crate::transcript::load;
use crate::wiring::{ReplayArgs, replay_command};
use favur_context::import::rules::Rules;

#[test]
fn the_command_replays_every_trace_with_the_shipped_rules() {
    let Some(dir) = common::traces_dir() else {
        return;
    };
    let files = common::trace_files(&dir);
    assert!(!files.is_empty(), "no traces in {}", dir.display());
    let mut argv = vec!["replay".to_owned()];
    argv.extend(files.iter().map(|f| f.display().to_string()));
    argv.extend(
        [
            "--rules",
            common::RULES,
            "--policy",
            "default",
            "--window",
            "200000",
        ]
        .map(String::from),
    );
    // How long it takes is shown by running the command (docs/replay.md), not asserted.
    let report = replay_command(&common::parse_args::<ReplayArgs>(argv)).expect("replay runs");
    println!("{report}\nreplayed {} traces", files.len());
    assert!(report.contains("| **TOTAL** | policy |"), "{report}");
    assert!(report.contains("| **TOTAL** | trim-oldest |"));
    assert!(report.contains("| **TOTAL** | mask-old |"));
    assert!(report.contains("| **TOTAL** | no compaction |"));
    // Without compaction every source is in the request verbatim: every reference and
    // every exact-text span survives (the measures find what is there).
    let none = report
        .lines()
        .find(|l| l.starts_with("| **TOTAL** | no compaction |"))
        .unwrap();
    assert_eq!(none.matches("| 100.0% (").count(), 2, "{none}");
    assert!(report.contains("## Cache per compaction (policy run)"));
}

#[test]
fn every_request_of_the_policy_replay_is_a_valid_request() {
    let Some(dir) = common::traces_dir() else {
        return;
    };
    let rules = Rules::load(common::RULES).unwrap();
    for file in common::trace_files(&dir) {
        let p = Prepared::new(load(&file, None, &rules).expect("trace imports and classifies"));
        for format in [
            RequestFormat::OpenAi,
            RequestFormat::Anthropic,
            RequestFormat::AnthropicCached,
            RequestFormat::Responses,
            RequestFormat::Gemini,
        ] {
            use favur_context::render::validate;
            let mut s = PolicyStrategy::new(Default::default(), Default::default());
            let run = replay(&p, &mut s, Some(&LibRenderer(format)), &mut |step, r| {
                let checked = match format {
                    RequestFormat::OpenAi => validate::validate_openai(r),
                    RequestFormat::Anthropic | RequestFormat::AnthropicCached => {
                        validate::validate_anthropic(r)
                    }
                    RequestFormat::Responses => validate::validate_responses_strict(r),
                    RequestFormat::Gemini => validate::validate_gemini(r),
                };
                checked.unwrap_or_else(|e| panic!("{} step {step}: {e}", file.display()));
                Ok(())
            })
            .unwrap();
            assert!(run.steps.iter().all(|s| !s.refused), "{}", file.display());
            for (k, step) in run.steps.iter().enumerate() {
                // Usage is what is sent, in every format `request_tokens` reads (it does
                // not read Gemini bodies: `rendered` is 0 there).
                if format != RequestFormat::Gemini {
                    assert_eq!(step.tokens, step.rendered, "{} step {k}", file.display());
                }
                // No tool output is shown without the command that produced it.
                assert_eq!(step.commandless, 0, "{} step {k}", file.display());
            }
            // The task (the first user message) is pinned by the shipped rules and sent
            // verbatim in every request.
            let task = p
                .transcript()
                .messages
                .iter()
                .find(|m| m.pin && m.classified.message().role == favur_context::Role::User);
            assert!(task.is_some(), "{}: the task is not pinned", file.display());
        }
    }
}
