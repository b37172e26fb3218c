//! How far a tier reaches: oldest first, superseded first, stopping at the policy's target;
//! keys survive a journal and are never sent; rules give keys and refuse bad ones.

mod common;

use std::num::NonZeroU8;

use favur_context::compact::Plan;
use favur_context::import::rules::{MessageFacts, RuleRef, Rules, RulesError};
use favur_context::journal::OpenOptions;
use favur_context::store::NewEntry;
use favur_context::{Compactor, EntryId, History, Policy, Role, Store, fuzzy, strict};

/// The task, then `n` fuzzy user entries of ~`size` words each, then the assistant's answer
/// (so every entry before it is consumed). Returns the history and the entries' ids.
fn views(n: usize, size: usize, key: impl Fn(usize) -> Option<String>) -> (History, Vec<EntryId>) {
    let mut h = History::new();
    h.pin(strict!(user: "the task"));
    let mut ids = Vec::new();
    for i in 0..n {
        let body = format!("view {i}: {}", format!("line{i} of the file ").repeat(size));
        let c = fuzzy!(user: "{body}");
        let c = match key(i) {
            Some(k) => c.with_key(k),
            None => c,
        };
        ids.push(h.append(c));
    }
    h.append(fuzzy!(assistant: "read them all"));
    (h, ids)
}

#[test]
fn a_tier_takes_the_oldest_first_and_stops_at_the_target() {
    let (h, ids) = views(12, 400, |_| None);
    let policy = Policy::default(); // tier 2 at 20,000 tokens, target 10,000
    assert!(h.usage_tokens() >= 20_000, "usage {}", h.usage_tokens());
    let plan = Plan::new(&h, &policy, NonZeroU8::new(2).unwrap());
    let dropped = plan.drops().to_vec();
    // A prefix of the oldest, nothing newer than a kept one.
    assert!(
        !dropped.is_empty() && dropped.len() < ids.len(),
        "{dropped:?}"
    );
    assert_eq!(dropped, ids[..dropped.len()].to_vec());
    let after = h.usage_tokens() - plan.reclaim_estimate();
    let target = policy.target_tokens(NonZeroU8::new(2).unwrap()).unwrap();
    assert!(
        after <= target,
        "usage after {after} over the target {target}"
    );
    // It stops: one entry fewer would not have reached the target.
    let one = u64::from(h.recall(ids[0]).unwrap().tokens());
    assert!(
        after + one > target,
        "took more than it needed: {after} + {one}"
    );
}

#[test]
fn pinned_tokens_are_not_counted_against_the_target() {
    // A long pinned prompt (~8,000 tokens), or as many tokens of request overhead (tool
    // definitions): the plain target (10,000 at tier 2) would leave 2,000 tokens of
    // history; the tier shares out only what it can free.
    let two = NonZeroU8::new(2).unwrap();
    let prompt = "You are a careful agent; follow the rules. ".repeat(900);
    let mut pinned = History::new();
    pinned.pin(strict!(system: "{prompt}"));
    let mut overhead = History::new();
    overhead.pin(strict!(system: "You are a careful agent."));
    overhead.set_request_overhead_tokens(pinned.usage_tokens() - overhead.usage_tokens());
    for mut h in [pinned, overhead] {
        let floor = h.usage_tokens();
        let mut ids = Vec::new();
        for i in 0..12 {
            let body = format!("view {i}: {}", format!("line{i} of the file ").repeat(300));
            ids.push(h.append(fuzzy!(user: "{body}")));
        }
        h.append(fuzzy!(assistant: "read them all"));
        let policy = Policy::default();
        assert!(
            floor > 7_000 && h.usage_tokens() >= 20_000,
            "{floor} {}",
            h.usage_tokens()
        );
        let plan = Plan::new(&h, &policy, two);
        let after = h.usage_tokens() - plan.reclaim_estimate();
        let target = policy.target_tokens_above(two, floor).unwrap();
        assert_eq!(target, floor + (20_000 - floor) / 2);
        assert!(
            after <= target,
            "usage after {after} over the target {target}"
        );
        assert!(
            after > policy.target_tokens(two).unwrap(),
            "it took history down to the plain target: {after}"
        );
        let dropped = plan.drops().to_vec();
        assert!(
            dropped.len() < ids.len() - 1,
            "took nearly all: {dropped:?}"
        );
        assert_eq!(dropped, ids[..dropped.len()].to_vec(), "the oldest first");
    }
}

#[test]
fn a_view_of_some_lines_supersedes_only_views_it_covers() {
    use favur_context::message::KeyPart;
    let mut h = History::new();
    h.pin(strict!(user: "the task"));
    let parts = [
        None,                           // 0: the whole file
        Some(KeyPart::Lines(120, 170)), // 1
        Some(KeyPart::Lines(580, 620)), // 2
        Some(KeyPart::Lines(600, 610)), // 3: covered by nothing later
        Some(KeyPart::Lines(100, 200)), // 4: covers 1, not 0
        Some(KeyPart::Unknown),         // 5: a tail: covers nothing
    ];
    let mut ids = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let body = format!("view {i}: {}", "a line of a.rs ".repeat(900));
        let c = fuzzy!(user: "{body}").with_key("a.rs");
        ids.push(h.append(match part {
            Some(p) => c.with_key_part(*p),
            None => c,
        }));
    }
    h.append(fuzzy!(assistant: "read them all"));
    let whole = Policy::builder().target(0.0).build().unwrap();
    let plan = Plan::new(&h, &whole, NonZeroU8::new(2).unwrap());
    assert_eq!(plan.superseded(), &[ids[1]], "only the lines 100-200 cover");
    // A whole view (or an edit) later supersedes every part before it.
    h.append(fuzzy!(user: "view 6: {}", "a line of a.rs ".repeat(900)).with_key("a.rs"));
    h.append(fuzzy!(assistant: "again"));
    let plan = Plan::new(&h, &whole, NonZeroU8::new(2).unwrap());
    assert_eq!(plan.superseded(), &ids[..]);
}

#[test]
fn target_zero_applies_the_tier_whole() {
    let (h, ids) = views(12, 400, |_| None);
    let whole = Policy::builder().target(0.0).build().unwrap();
    assert_eq!(
        Plan::new(&h, &whole, NonZeroU8::new(2).unwrap()).drops(),
        &ids[..]
    );
}

#[test]
fn superseded_material_goes_before_older_current_material() {
    // view 0 of b.rs (oldest, current), views 1.. of a.rs: all but the newest a.rs
    // view are superseded and go first, before the older b.rs view.
    let (h, ids) = views(8, 300, |i| {
        Some(if i == 0 { "b.rs".into() } else { "a.rs".into() })
    });
    let plan = Plan::new(&h, &Policy::default(), NonZeroU8::new(2).unwrap());
    assert!(plan.drops().contains(&ids[1]), "{:?}", plan.drops());
    assert!(
        !plan.drops().contains(&ids[0]),
        "the current b.rs view stays: {:?}",
        plan.drops()
    );
    assert!(plan.superseded().iter().all(|id| ids[1..7].contains(id)));
    assert!(
        !plan.superseded().contains(&ids[7]),
        "the newest view is current"
    );
}

#[test]
fn the_report_names_what_was_superseded() {
    let (mut h, ids) = views(8, 300, |i| {
        Some(if i == 0 { "b.rs".into() } else { "a.rs".into() })
    });
    let report = Compactor::new(Policy::default())
        .compact(&mut h)
        .unwrap()
        .expect("usage is over tier 2");
    assert!(report.superseded.contains(&ids[1]));
    let line = format!("superseded: {}, {}", ids[1], ids[2]);
    assert!(report.to_string().contains(&line), "{report}");
    assert!(!report.superseded.contains(&ids[0]), "b.rs is current");
}

#[test]
fn keys_survive_a_journal_and_still_supersede() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.jsonl");
    let setup = || vec![NewEntry::pinned(strict!(user: "the task"))];
    let mut j = OpenOptions::new().open_or_create(&path, setup).unwrap();
    let mut ids = Vec::new();
    for i in 0..6 {
        let body = format!("view {i}: {}", "a line of a.rs ".repeat(400));
        ids.push(j.append(fuzzy!(user: "{body}").with_key("a.rs")).unwrap());
    }
    j.append(fuzzy!(assistant: "ok")).unwrap();
    drop(j);
    let j = favur_context::journal::JournaledHistory::open(&path).unwrap();
    let plan = Plan::new(j.history(), &Policy::default(), NonZeroU8::new(2).unwrap());
    assert_eq!(plan.superseded().first(), Some(&ids[0]));
    assert!(!plan.superseded().contains(&ids[5]));
    // The key is the engine's: kept in the records, in no rendered request.
    let h = j.history();
    let sent = [
        favur_context::render::render_openai(h),
        favur_context::render::render_anthropic(h).to_value(),
        favur_context::render::render_responses(h),
        favur_context::render::render_gemini(h),
    ];
    for body in sent {
        let text = body.to_string();
        assert!(
            text.contains("a line of a.rs") && !text.contains("favur_key"),
            "{text:.200}"
        );
    }
}

#[test]
fn rules_give_keys_by_path_and_by_command() {
    let rules = Rules::from_toml(
        "[[rule]]\nname = \"views\"\ncommand = '^(cat|sed)'\nkey = \"path\"\nclass = \"strict\"\n\
         [[rule]]\nname = \"tests\"\ncommand = 'pytest'\nkey = \"command\"\nclass = \"strict\"\n\
         [[rule]]\nname = \"rest\"\nclass = \"fuzzy\"\n",
    )
    .unwrap();
    let view = MessageFacts::new(3, Role::Tool).with_command("sed -n '1,40p' pkg/mod.py");
    let edit = MessageFacts::new(5, Role::Tool).with_command("cat > pkg/mod.py <<'EOF'");
    let test = MessageFacts::new(7, Role::Tool).with_command("pytest  tests/test_mod.py");
    let other = MessageFacts::new(9, Role::Tool).with_command("echo done");
    assert_eq!(
        rules.classify(&view).unwrap().key.as_deref(),
        Some("pkg/mod.py")
    );
    assert_eq!(
        rules.classify(&edit).unwrap().key.as_deref(),
        Some("pkg/mod.py")
    );
    assert_eq!(
        rules.classify(&test).unwrap().key.as_deref(),
        Some("pytest tests/test_mod.py")
    );
    assert_eq!(rules.classify(&other).unwrap().key, None);
    assert_eq!(rules.key_for(RuleRef::Default, &view), None);
    // The part a view shows comes with its path; an edit and a command key have none.
    use favur_context::message::KeyPart;
    assert_eq!(
        rules.classify(&view).unwrap().key_part,
        Some(KeyPart::Lines(1, 40))
    );
    assert_eq!(rules.classify(&edit).unwrap().key_part, None);
    assert_eq!(rules.classify(&test).unwrap().key_part, None);
}

#[test]
fn an_imported_view_carries_its_part() {
    use favur_context::import::{Format, parse};
    use favur_context::message::KeyPart;
    let rules = Rules::from_toml(
        "[[rule]]\nname = \"views\"\nrole = \"tool\"\ncommand = '^sed'\nkey = \"path\"\nclass = \"strict\"\n\
         [[rule]]\nname = \"rest\"\nclass = \"fuzzy\"\n",
    )
    .unwrap();
    let transcript = parse(
        Format::OpenAi,
        r#"{"messages":[
            {"role":"user","content":"fix it"},
            {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",
              "function":{"name":"bash","arguments":"{\"command\":\"sed -n '580,620p' a.py\"}"}}]},
            {"role":"tool","tool_call_id":"c1","content":"def f():\n    pass"}]}"#,
    )
    .unwrap();
    let mut h = History::new();
    transcript.import_into(&mut h, &rules).unwrap();
    let view = h.entries().last().unwrap().message();
    assert_eq!(view.extensions["favur_key"], "a.py");
    assert_eq!(view.extensions["favur_key_part"], "lines 580-620");
    assert_eq!("lines 580-620".parse(), Ok(KeyPart::Lines(580, 620)));
}

#[test]
fn a_bad_key_is_refused_naming_the_choices() {
    let err = Rules::from_toml("[[rule]]\nname = \"v\"\nkey = \"file\"\nclass = \"strict\"\n")
        .unwrap_err();
    assert!(
        matches!(err, RulesError::InvalidValue { rule: 1, .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("key") && text.contains("\"path\" or \"command\""),
        "{text}"
    );
    assert!(Rules::from_toml("[[rule]]\nname = \"v\"\nkey = 3\nclass = \"strict\"\n").is_err());
}

#[test]
fn a_target_out_of_range_is_refused() {
    for bad in [-0.1, 1.0, 1.5, f64::NAN] {
        let err = Policy::builder().target(bad).build().unwrap_err();
        assert!(err.to_string().starts_with("target: "), "{err}");
    }
    let p = Policy::from_toml_str("target = 0.25\n").unwrap();
    assert_eq!(p.target_tokens(NonZeroU8::new(1).unwrap()), Some(2_500));
}

#[test]
fn a_tool_set_gives_its_tools_keys_to_their_results() {
    use favur_context::ToolCall;
    use favur_context::tools::ToolSet;
    common::tool!(ReadFile: strict, "read_file", "Show a file",
        serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        |_| Ok("fn main() {}".into()),
        key: |arguments| arguments["path"].as_str().map(str::to_owned));
    let tools = ToolSet::new(favur_context::Retention::Fuzzy)
        .with_sync(ReadFile)
        .unwrap();
    let h = History::new();
    let call = ToolCall::new("c1", "read_file", r#"{"path":"src/main.rs"}"#);
    let result = common::block_on(tools.run(&call, &h));
    assert_eq!(result.key(), Some("src/main.rs"));
    let unknown = common::block_on(tools.run(&ToolCall::new("c2", "nope", "{}"), &h));
    assert_eq!(unknown.key(), None);
}

#[test]
fn a_tool_set_gives_the_part_a_result_shows() {
    use favur_context::ToolCall;
    use favur_context::message::KeyPart;
    use favur_context::tools::{Tool, ToolSet};
    struct ReadLines;
    #[favur_context::retention(strict)]
    impl Tool for ReadLines {
        fn name(&self) -> &str {
            "read_lines"
        }
        fn description(&self) -> &str {
            "Show lines of a file"
        }
        fn parameters(&self) -> serde_json::Value {
            serde_json::json!({"type": "object"})
        }
        fn call(&self, _: &serde_json::Value) -> Result<String, String> {
            Ok("fn main() {}".into())
        }
        fn key(&self, a: &serde_json::Value) -> Option<String> {
            a["path"].as_str().map(str::to_owned)
        }
        fn key_part(&self, a: &serde_json::Value) -> Option<KeyPart> {
            Some(KeyPart::Lines(a["from"].as_u64()?, a["to"].as_u64()?))
        }
    }
    let tools = ToolSet::new(favur_context::Retention::Fuzzy)
        .with_sync(ReadLines)
        .unwrap();
    let h = History::new();
    let ranged = ToolCall::new("c1", "read_lines", r#"{"path":"a.rs","from":3,"to":9}"#);
    let result = common::block_on(tools.run(&ranged, &h));
    assert_eq!(result.key(), Some("a.rs"));
    assert_eq!(result.key_part(), Some(KeyPart::Lines(3, 9)));
    let whole = ToolCall::new("c2", "read_lines", r#"{"path":"a.rs"}"#);
    assert_eq!(common::block_on(tools.run(&whole, &h)).key_part(), None);
}

/// The task, then `n` strict outputs of ~`size` words each, then the assistant's answer.
fn strict_views(n: usize, size: usize) -> History {
    let mut h = History::new();
    h.pin(strict!(user: "the task"));
    for i in 0..n {
        let lines: String = (0..size / 8)
            .map(|k| format!("    value_{i}_{k} = compute(alpha, beta)\n"))
            .collect();
        h.append(strict!(user: "view {i}:\n{lines}"));
    }
    h.append(fuzzy!(assistant: "read them all"));
    h
}

#[test]
fn strict_summaries_grow_into_the_room_the_reach_leaves_and_reach_no_further() {
    let h = strict_views(14, 1_400);
    let two = NonZeroU8::new(2).unwrap();
    let grown = Policy::default();
    let fixed = Policy::builder()
        .strict_summary_tokens_per_entry(Some(200))
        .build()
        .unwrap();
    let (a, b) = (Plan::new(&h, &grown, two), Plan::new(&h, &fixed, two));
    let members =
        |p: &Plan| -> Vec<EntryId> { p.runs().iter().flat_map(|r| r.members.clone()).collect() };
    // The same reach: the growth never summarizes an entry more.
    assert!(!members(&b).is_empty());
    assert_eq!(members(&a), members(&b));
    let budget = |p: &Plan| -> u32 { p.runs().iter().map(|r| r.budget_tokens).sum() };
    let per_entry = budget(&a) / members(&a).len() as u32;
    assert!(
        budget(&a) > budget(&b) && per_entry <= grown.strict_summary_tokens_per_entry(),
        "grown {} (per entry {per_entry}), fixed {}",
        budget(&a),
        budget(&b)
    );
    // And it still frees nine tenths of what the target asks.
    let target = grown.target_tokens(two).unwrap();
    let need = h.usage_tokens() - target;
    assert!(
        a.reclaim_estimate() * 10 >= need * 9,
        "{} of {need}",
        a.reclaim_estimate()
    );
}

#[test]
fn only_summaries_of_strict_material_grow() {
    use favur_context::Retention;
    use favur_context::compact::{Action, Tier};
    // One tier that summarizes every class; strict views, then (after a pin that closes
    // the run) fuzzy ones: one strict run and one fuzzy run, oldest first.
    let mut h = History::new();
    h.pin(strict!(user: "the task"));
    for i in 0..6 {
        let lines: String = (0..180)
            .map(|k| format!("    value_{i}_{k} = compute(alpha, beta)\n"))
            .collect();
        h.append(strict!(user: "strict view {i}:\n{lines}"));
    }
    h.pin(strict!(user: "a standing instruction"));
    for i in 0..6 {
        let lines = format!("line{i} of the fuzzy file\n").repeat(250);
        h.append(fuzzy!(user: "fuzzy view {i}:\n{lines}"));
    }
    h.append(fuzzy!(assistant: "read them all"));
    let all = Action::Summarize;
    let policy = Policy::builder()
        .tiers([Tier::new(0.05, all, all, all)])
        .limit(0.5)
        .build()
        .unwrap();
    let plan = Plan::new(&h, &policy, NonZeroU8::MIN);
    let per_entry = |class: Retention| -> Vec<u32> {
        plan.runs()
            .iter()
            .filter(|r| r.retention == class)
            .map(|r| r.budget_tokens / r.members.len() as u32)
            .collect()
    };
    let (fuzzy, strict) = (per_entry(Retention::Fuzzy), per_entry(Retention::Strict));
    assert_eq!(fuzzy.len(), 1, "{:?}", plan.runs());
    assert_eq!(strict.len(), 1, "{:?}", plan.runs());
    assert_eq!(fuzzy[0], policy.summary_tokens_per_entry());
    assert!(
        strict[0] > policy.summary_tokens_per_entry(),
        "strict {strict:?}"
    );
}

#[test]
fn a_strict_budget_below_the_per_entry_budget_is_refused() {
    let err = Policy::builder()
        .summary_tokens_per_entry(300)
        .strict_summary_tokens_per_entry(Some(250))
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "strict_summary_tokens_per_entry: 250 is less than summary_tokens_per_entry 300; a summary of strict material may grow, not shrink"
    );
}
