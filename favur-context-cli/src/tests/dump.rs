//! `--dump`: one JSON line `{transcript, step, request}` per rendered request.

use super::common;

use crate::ReplayError;
use crate::cli::{Job, run};
use crate::engine::{LibRenderer, PolicyStrategy, RequestFormat};
use crate::replay::replay;
use crate::strategy::Strategy;
use common::{call, hand_rules, prepare, result};
use favur_context::Policy;
use serde_json::{Value, json};

fn transcript(task: &str) -> Value {
    json!([
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": task},
        call("c1", "ls src"),
        result("c1", "src/parser.rs\nsrc/lexer.rs"),
        call("c2", "cat src/parser.rs"),
        result("c2", "fn parse_expr() {}"),
        {"role": "assistant", "content": "Done with src/parser.rs."},
    ])
}

#[test]
fn dump_has_one_line_per_request_in_order_with_the_rendered_request() {
    let rules = hand_rules();
    let a = prepare(transcript("First task."), &rules);
    let mut b = prepare(transcript("Second task."), &rules);
    // Give the second transcript its own id.
    let mut t = b.transcript().clone();
    t.id = "second".into();
    b = crate::replay::Prepared::new(t);
    let transcripts = [a, b];
    let path = std::env::temp_dir().join(format!("favur-dump-{}.jsonl", std::process::id()));
    let policy = Policy::for_window(200_000).unwrap();
    let factory = || -> Result<Box<dyn Strategy>, ReplayError> {
        Ok(Box::new(PolicyStrategy::new(
            policy.clone(),
            Default::default(),
        )))
    };
    let renderer = LibRenderer(RequestFormat::OpenAi);
    let job = Job {
        transcripts: &transcripts,
        policy: &factory,
        renderer: &renderer,
        window: 200_000,
        dump: Some(path.clone()),
        svg: None,
        baselines: false,
    };
    let outcome = run(&job).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "three requests per transcript");
    assert_eq!(outcome.rows[0].summaries[0].requests, 3);

    // The expected requests, rendered independently.
    let mut expected = Vec::new();
    for p in &transcripts {
        let mut s = PolicyStrategy::new(policy.clone(), Default::default());
        replay(p, &mut s, Some(&renderer), &mut |step, r| {
            expected.push((p.transcript().id.clone(), step, r.clone()));
            Ok(())
        })
        .unwrap();
    }
    for (line, (id, step, request)) in lines.iter().zip(&expected) {
        let v: Value = serde_json::from_str(line).expect("each line is JSON");
        let obj = v.as_object().expect("each line is an object");
        // The key order is the written text's (a parsed map need not keep it).
        let prefix = format!(
            "{{\"transcript\":{},\"step\":{step},\"request\":[",
            json!(id)
        );
        assert!(line.starts_with(&prefix), "{line}");
        assert_eq!(obj.len(), 3);
        assert_eq!(obj["transcript"], json!(id));
        assert_eq!(obj["step"], json!(step));
        assert_eq!(&obj["request"], request);
        favur_context::render::validate::validate_openai(request).expect("a valid request");
    }
    assert_eq!(expected[0].0, "hand");
    assert_eq!(expected[3].0, "second");
    // The last request of each carries the whole transcript but the final answer.
    let last = &expected[2].2;
    assert_eq!(last.as_array().unwrap().len(), 6);
}
