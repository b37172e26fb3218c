//! The misclassification report and the command's errors, on hand-made transcripts.

use super::common;

use crate::engine::{LibRenderer, PolicyStrategy};
use crate::replay::replay;
use crate::report::Summary;
use crate::suggest::{misclassification, suggestions};
use common::{call, prepare, result};
use favur_context::import::rules::Rules;
use favur_context::{Policy, Retention};
use serde_json::json;

fn rules(listing_class: &str, run_class: &str) -> Rules {
    Rules::from_toml(&format!(
        r#"
        [[rule]]
        name = "listings"
        role = "tool"
        command = '^ls\b'
        class = "{listing_class}"
        [[rule]]
        name = "runs"
        role = "tool"
        command = '^python\b'
        class = "{run_class}"
        [[rule]]
        name = "rest"
        class = "strict"
        "#
    ))
    .unwrap()
}

/// Twelve listings whose file names the agent only uses at the very end, each followed by
/// a long script run nobody refers to again.
fn transcript() -> serde_json::Value {
    let mut m = vec![json!({"role": "user", "content": "Fix the package."})];
    let mut names = Vec::new();
    for i in 0..12 {
        m.push(call(&format!("l{i}"), &format!("ls pkg{i}")));
        let a = format!("pkg{i}/mod_{i}_alpha.py");
        let b = format!("pkg{i}/mod_{i}_beta.py");
        m.push(result(&format!("l{i}"), &format!("{a}\n{b}")));
        names.push(a);
        names.push(b);
        m.push(call(&format!("r{i}"), &format!("python run_{i}.py")));
        m.push(result(
            &format!("r{i}"),
            &"all good, nothing to report here\n".repeat(30),
        ));
    }
    m.push(json!({"role": "assistant", "content": format!("Edit {}", names.join(" "))}));
    json!(m)
}

fn policy_summary(r: &Rules) -> (Summary, Policy) {
    let p = prepare(transcript(), r);
    let policy = Policy::for_window(6_000).unwrap();
    let mut s = PolicyStrategy::new(policy.clone(), Default::default());
    let run = replay(
        &p,
        &mut s,
        Some(&LibRenderer::default()),
        &mut |_, _| Ok(()),
    )
    .unwrap();
    (Summary::of(&run, &p), policy)
}

#[test]
fn lost_references_suggest_raising_the_rule_that_lost_them() {
    let r = rules("forgettable", "strict");
    let (s, policy) = policy_summary(&r);
    let listings = s.by_rule[&favur_context::import::rules::RuleRef::Rule(0)];
    assert_eq!(listings.refs.total, 24);
    let lost = listings.refs.total - listings.refs.survived;
    assert!(
        lost >= 10,
        "the small window loses the early listings: {listings:?}"
    );
    assert_eq!(lost, listings.lost_summarized + listings.lost_dropped);
    let found = suggestions(&s, &r, policy.tiers());
    let raise = found
        .iter()
        .find(|x| x.rule == "listings")
        .expect("a suggestion for the listings");
    // Forgettable and fuzzy are alike under the default tiers: the suggestion skips fuzzy.
    assert_eq!(
        (raise.from, raise.to),
        (Retention::Forgettable, Retention::Strict)
    );
    assert!(
        raise.evidence.contains("of 24 references"),
        "{}",
        raise.evidence
    );
    // The script runs were never referenced again: lower them (strict -> fuzzy).
    let lower = found.iter().find(|x| x.rule == "runs").expect("runs");
    assert_eq!(
        (lower.from, lower.to, lower.strength),
        (Retention::Strict, Retention::Fuzzy, "moderate")
    );
    assert!(
        lower
            .evidence
            .starts_with("12 of 12 tool outputs never referenced again"),
        "{}",
        lower.evidence
    );
    let text = misclassification(&s, &r, policy.tiers());
    assert!(
        text.contains("| `runs` | strict | 12 | 12/12 (100%) | 0 |"),
        "{text}"
    );
    assert!(
        text.contains("- suggest `listings`: forgettable -> strict"),
        "{text}"
    );
}

#[test]
fn no_suggestion_without_evidence() {
    let r = rules("strict", "fuzzy");
    let (s, policy) = policy_summary(&r);
    let found = suggestions(&s, &r, policy.tiers());
    assert!(
        found.iter().all(|x| x.rule != "runs"),
        "fuzzy runs: lowering to forgettable would change nothing: {found:?}"
    );
}

mod command {
    use crate::wiring::{CliError, ReplayArgs, replay_command};

    fn run(
        dir: &std::path::Path,
        rules: &str,
        transcript: &str,
        policy: &str,
    ) -> Result<String, CliError> {
        let r = dir.join("rules.toml");
        let t = dir.join("t.json");
        std::fs::write(&r, rules).unwrap();
        std::fs::write(&t, transcript).unwrap();
        let argv = [
            "x",
            t.to_str().unwrap(),
            "--rules",
            r.to_str().unwrap(),
            "--policy",
            policy,
        ];
        replay_command(&super::common::parse_args::<ReplayArgs>(argv))
    }

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("favur-cli-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    const T: &str =
        r#"[{"role": "user", "content": "Fix it."}, {"role": "assistant", "content": "Done."}]"#;

    /// One rule classifying everything strict.
    const ALL: &str = "[[rule]]\nname = \"all\"\nclass = \"strict\"\n";

    /// Runs the command in a fresh folder `name` and returns its error's text.
    fn error_of(name: &str, rules: &str, transcript: &str, policy: &str) -> String {
        match run(&tmp(name), rules, transcript, policy) {
            Ok(out) => panic!("expected an error, got: {out}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn unmatched_messages_fail_the_command_listing_them() {
        let rules = "[[rule]]\nname = \"u\"\nrole = \"user\"\nclass = \"strict\"\n";
        let text = error_of("unmatched", rules, T, "default");
        for want in [
            "transcript t: 1 message matched no rule",
            "message 1: role assistant: \"Done.\"",
        ] {
            assert!(text.contains(want), "{text}");
        }
    }

    #[test]
    fn a_bad_rules_file_names_the_file_rule_and_field() {
        let rules = "[[rule]]\nname = \"u\"\nclass = \"sometimes\"\n";
        let text = error_of("badrules", rules, T, "default");
        assert!(
            text.contains("rules.toml: rule 1 (`u`): field `class`"),
            "{text}"
        );
    }

    #[test]
    fn a_bad_policy_file_is_reported() {
        let p = tmp("badpolicy").join("policy.toml");
        std::fs::write(&p, "window_tokens = 0\n").unwrap();
        let text = error_of("badpolicy", ALL, T, p.to_str().unwrap());
        assert!(text.starts_with("policy: "), "{text}");
    }

    #[test]
    fn a_malformed_transcript_names_the_message() {
        let bad = r#"[{"role": "user", "content": "a"}, {"role": "tool", "tool_call_id": "x", "content": "b"}]"#;
        let text = error_of("badt", ALL, bad, "default");
        assert!(text.contains("message 1"), "{text}");
    }

    #[test]
    fn a_good_run_prints_the_table_and_the_cost_model() {
        let out = run(&tmp("good"), ALL, T, "default").unwrap();
        assert!(out.contains("| t | policy | 1 |"), "{out}");
        assert!(out.contains("cost model: "), "{out}");
    }
}
