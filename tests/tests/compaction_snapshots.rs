//! The seed's scenario at every tier, exactly as issue 3 states it, with snapshots of the
//! plans, the reports and the views.

use std::num::NonZeroU8;

use favur_context::compact::{CompactionReport, Plan};
use favur_context::message::{EntryKind, kinds::Directive};
use favur_context::render::Form;
use favur_context::tokens::TokenCounter as _;
use favur_context::{Compactor, EntryId, History, Policy, forgettable, fuzzy, strict};

const TRACE: &str = "running 12 tests
test parse::tests::nested_lists ... FAILED
failures:
---- parse::tests::nested_lists stdout ----
thread 'parse::tests::nested_lists' panicked at src/parse.rs:142:9:
assertion `left == right` failed
  left: Some(List([Int(1)]))
 right: Some(List([Int(1), List([Int(2)])]))
stack backtrace:
   0: rust_begin_unwind
   1: core::panicking::assert_failed
   2: favur_demo::parse::tests::nested_lists
             at ./src/parse.rs:142:9
   3: favur_demo::parse::tests::nested_lists::{{closure}}
             at ./src/parse.rs:131:24
   4: core::ops::function::FnOnce::call_once
             at /rustc/library/core/src/ops/function.rs:250:5
   5: test::run_test::run_test_inner::{{closure}}
             at /rustc/library/test/src/lib.rs:648:18
   6: std::sys::backtrace::__rust_begin_short_backtrace
             at /rustc/library/std/src/sys/backtrace.rs:152:18
   7: std::thread::Builder::spawn_unchecked_::{{closure}}
             at /rustc/library/std/src/thread/mod.rs:559:17
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.

failures:
    parse::tests::nested_lists
test result: FAILED. 11 passed; 1 failed
error: test failed, to rerun pass `--lib`
exit status 101";

const LISTING: &str = "./Cargo.toml
./Cargo.lock
./README.md
./src/main.rs
./src/lib.rs
./src/parse.rs
./src/lex.rs
./src/eval.rs
./tests/parse.rs
./tests/eval.rs
./benches/parse.rs
./target/debug/.fingerprint";

struct Seed {
    history: History,
    listing: EntryId,
    trace: EntryId,
    plan: EntryId,
    directive: EntryId,
}

fn seed() -> Seed {
    let mut h = History::new();
    h.pin(strict!(system: "You are a careful coding agent working in /work/demo."));
    h.append(
        strict!(user: "The test parse::tests::nested_lists fails. Fix the parser, not the test."),
    );
    h.append(fuzzy!(tool_call: "c1", "bash", serde_json::json!({"command": "find . -maxdepth 2"})));
    let listing = h.append(forgettable!(tool_result("c1"): "{LISTING}"));
    h.append(fuzzy!(tool_call: "c2", "read_file", serde_json::json!({"path": "src/parse.rs"})));
    h.append(fuzzy!(tool_result("c2"): "{}", "pub fn parse_list(tokens: &[Token]) -> Option<Value> {\n    // ...\n}\n".repeat(6)));
    h.append(fuzzy!(tool_call: "c3", "bash", serde_json::json!({"command": "cargo test"})));
    let trace = h.append(strict!(tool_error("c3"): "{TRACE}"));
    let plan = h.append(strict!(assistant: "Plan: 1. parse_list must recurse on '['. 2. rerun the test. 3. run the whole suite."));
    let directive = h.append(Directive::new(
        "Do not change the public API of the parser.",
    ));
    h.append(fuzzy!(tool_call: "c4", "edit_file", serde_json::json!({"line": 140, "path": "src/parse.rs"})));
    h.append(fuzzy!(tool_result("c4"): "edited src/parse.rs: 3 lines changed"));
    h.append(fuzzy!(assistant: "Edited parse_list to recurse; rerunning the failing test."));
    // In flight: the newest tool call and its result, not yet answered by the model.
    h.append(strict!(tool_call: "c5", "bash", serde_json::json!({"command": "cargo test parse::tests::nested_lists"})));
    h.append(strict!(tool_result("c5"): "test parse::tests::nested_lists ... ok\nexit status 0"));
    Seed {
        history: h,
        listing,
        trace,
        plan,
        directive,
    }
}

/// Where an entry is in the view: verbatim, in another form, inside a summary, or gone.
fn fate(h: &History, id: EntryId) -> String {
    if let Some(item) = h.view().items().iter().find(|i| i.id == id) {
        return match &item.form {
            Form::Verbatim => "verbatim".into(),
            Form::CallsOnly => "calls only".into(),
            Form::Placeholder { summary } => format!("placeholder -> {summary:?}"),
            Form::Capped(_) => "capped".into(),
            Form::Command => "command only".into(),
        };
    }
    for item in h.view().items() {
        if let Ok(e) = h.recall(item.id)
            && let EntryKind::Summary { replaces } = e.kind()
            && replaces.contains(&id)
        {
            return format!("summary {}", item.id);
        }
    }
    "gone".into()
}

/// The view as the model would see it, one line per item.
fn render(h: &History) -> String {
    let mut out = String::new();
    for item in h.view().items() {
        let e = h.recall(item.id).expect("view items are entries");
        let shown = item.form.message_for(&e);
        let mut text = shown.text();
        for c in shown.tool_calls() {
            text.push_str(&format!(
                "<call {} {} {}>",
                c.id,
                c.name,
                c.arguments.to_json_string()
            ));
        }
        for r in shown.tool_results() {
            text.push_str(&format!("<result {}: {}>", r.call_id, r.content));
        }
        let first = text
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(90)
            .collect::<String>();
        let form = match &item.form {
            Form::Verbatim => "verbatim".to_string(),
            Form::CallsOnly => "calls-only".into(),
            Form::Placeholder { .. } => "placeholder".into(),
            Form::Capped(_) => "capped".into(),
            Form::Command => "command only".into(),
        };
        out.push_str(&format!(
            "{:>4} {:<11} {:<9} {:<11} {:>4} tok | {}\n",
            item.id.to_string(),
            format!("{}", shown.role),
            e.retention().as_str(),
            form,
            item.tokens,
            first
        ));
    }
    out
}

/// Usage as the rendered requests count it (both formats, the history's counter and
/// framing).
fn usage_recount(h: &History) -> u64 {
    use favur_context::render::{render_anthropic, render_openai, request_tokens};
    let (counter, framing) = (h.counter(), h.framing_tokens());
    let openai = request_tokens(&render_openai(h), counter, framing);
    let anthropic = request_tokens(&render_anthropic(h).to_value(), counter, framing);
    assert_eq!(openai, anthropic);
    openai
}

/// `tier` forced on `h`, which must have work for it.
fn forced(c: &mut Compactor, h: &mut History, tier: u8) -> CompactionReport {
    c.compact_at(h, NonZeroU8::new(tier).expect("tiers are numbered from 1"))
        .unwrap()
        .unwrap_or_else(|| panic!("tier {tier} has work"))
}

/// The view rendered (see [`render`]) once usage is checked against what the rendered
/// requests count.
fn recounted_render(h: &History) -> String {
    assert_eq!(h.usage_tokens(), usage_recount(h));
    render(h)
}

#[test]
fn the_seed_scenario_holds_at_every_tier() {
    let Seed {
        mut history,
        listing,
        trace,
        plan,
        directive,
    } = seed();
    let mut c = Compactor::new(Policy::default());
    let before = history.clone();

    // Tier 1: summarize forgettable and fuzzy, keep strict. Nothing is deleted.
    let r1 = forced(&mut c, &mut history, 1);
    assert_eq!(
        fate(&history, trace),
        "verbatim",
        "the strict stack trace survives tier 1 verbatim"
    );
    assert!(
        fate(&history, listing).starts_with("summary"),
        "the listing is a summary after tier 1"
    );
    assert_eq!(fate(&history, plan), "verbatim");
    assert_eq!(fate(&history, directive), "verbatim");
    assert_eq!(
        r1.classes.forgettable.dropped.entries
            + r1.classes.fuzzy.dropped.entries
            + r1.classes.strict.dropped.entries,
        0
    );
    assert_eq!(r1.classes.strict.summarized.entries, 0);
    assert_eq!(r1.summarizer_calls, r1.summaries.len());
    let tier1 = recounted_render(&history);

    // Tier 2: drop forgettable and fuzzy (the listing's summary too), summarize strict.
    let r2 = forced(&mut c, &mut history, 2);
    assert!(
        fate(&history, trace).starts_with("summary"),
        "the stack trace is a summary after tier 2"
    );
    assert_eq!(
        fate(&history, listing),
        "gone",
        "the listing is gone after tier 2"
    );
    let summary_of_trace = history
        .view()
        .items()
        .iter()
        .filter_map(|i| history.recall(i.id).ok())
        .find(|e| matches!(e.kind(), EntryKind::Summary { replaces } if replaces.contains(&trace)))
        .expect("the trace's summary is in the view");
    let text = summary_of_trace.message().text();
    assert!(text.contains("panicked at src/parse.rs:142:9"), "{text}");
    assert!(text.contains("exit status 101"), "{text}");
    let block = Form::Verbatim.message_for(&summary_of_trace).text();
    assert!(
        block.contains(&trace.to_string()),
        "the summary names the ids it replaces: {text}"
    );
    assert_eq!(
        summary_of_trace.retention(),
        favur_context::Retention::Strict
    );
    assert!(r2.classes.strict.summarized.entries >= 2);
    let tier2 = recounted_render(&history);

    // Tier 3: drop everything compactable, summaries included.
    let r3 = forced(&mut c, &mut history, 3);
    assert_eq!(
        fate(&history, trace),
        "gone",
        "the stack trace is gone after tier 3"
    );
    assert_eq!(fate(&history, listing), "gone");
    let tier3 = recounted_render(&history);

    // Nothing was lost: every original is still recallable, verbatim.
    for e in before.entries() {
        assert_eq!(history.recall(e.id()).unwrap().message(), e.message());
    }
    // The in-flight tail is untouched at every tier.
    let tail: Vec<_> = before.view().items()[before.view().len() - 2..].to_vec();
    assert_eq!(
        &history.view().items()[history.view().len() - 2..],
        &tail[..]
    );

    insta::assert_snapshot!("seed_view_before", render(&before));
    insta::assert_snapshot!("seed_view_tier1", tier1);
    insta::assert_snapshot!("seed_view_tier2", tier2);
    insta::assert_snapshot!("seed_view_tier3", tier3);
    insta::assert_json_snapshot!("seed_report_tier1", r1);
    insta::assert_json_snapshot!("seed_report_tier2", r2);
    insta::assert_json_snapshot!("seed_report_tier3", r3);
    insta::assert_snapshot!("seed_report_tier2_text", r2.to_string());
}

#[test]
fn seed_plans_at_every_tier_from_the_same_history() {
    let Seed { history, .. } = seed();
    let policy = Policy::default();
    for tier in (1..=3u8).filter_map(NonZeroU8::new) {
        let plan = Plan::new(&history, &policy, tier);
        assert_eq!(
            plan,
            Plan::new(&history, &policy, tier),
            "planning is deterministic"
        );
        insta::assert_json_snapshot!(format!("seed_plan_tier{tier}"), plan);
    }
}

#[test]
fn seed_summary_texts() {
    let Seed { mut history, .. } = seed();
    let mut c = Compactor::new(Policy::default());
    let r1 = c.compact_at(&mut history, NonZeroU8::MIN).unwrap().unwrap();
    let r2 = c
        .compact_at(&mut history, NonZeroU8::new(2).unwrap())
        .unwrap()
        .unwrap();
    let mut out = String::new();
    for id in r1.summaries.iter().chain(&r2.summaries) {
        let e = history.recall(*id).unwrap();
        out.push_str(&format!(
            "=== {} ({}, {} tokens)\n{}\n",
            id,
            e.retention(),
            e.tokens(),
            Form::Verbatim.message_for(&e).text()
        ));
    }
    insta::assert_snapshot!("seed_summaries", out);
}

#[test]
fn tiers_fire_as_usage_climbs_and_not_again_until_the_next_threshold() {
    // A window so small that the seed alone reaches tier 2; growing it shows tier 1 first.
    let Seed { history, .. } = seed();
    let usage = history.usage_tokens();
    // Window such that usage is between 5% and 10%: tier 1 is due, not tier 2.
    let window = usage * 100 / 7;
    // Every reclaim is worth it here: this is about when tiers fire.
    let policy = Policy::builder()
        .window_tokens(window)
        .min_reclaim(0.0)
        .build()
        .unwrap();
    let mut c = Compactor::new(policy);
    let mut h = history.clone();
    assert_eq!(c.due(&h), NonZeroU8::new(1));
    assert!(c.prepare(&mut h).unwrap().compacted());
    let view_len = h.view().len();
    assert!(view_len < history.view().len());
    assert_eq!(c.last_report().unwrap().tier.get(), 1);
    // Nothing new: the next request does not compact again.
    let n = h.compactions().len();
    c.prepare(&mut h).unwrap();
    assert_eq!(h.compactions().len(), n);
    // Usage between 10% and 25% with a fresh engine: tier 2 directly, no escalation to 3.
    let mut c2 = Compactor::new(Policy::for_window(usage * 100 / 15).unwrap());
    let mut h2 = history.clone();
    c2.prepare(&mut h2).unwrap();
    assert_eq!(c2.last_report().unwrap().tier.get(), 2);
}

#[test]
fn the_limit_is_a_typed_error_and_nothing_is_lost() {
    let Seed { mut history, .. } = seed();
    let usage = history.usage_tokens();
    // Usage is 60% of this window: tier 3 fires, and the in-flight tail plus the pinned
    // prompt still carry more than the limit if the window is small enough.
    let window = usage * 10 / 6;
    let mut c = Compactor::new(Policy::for_window(window).unwrap());
    let before = history.clone();
    match c.prepare(&mut history) {
        Ok(_) => assert!(history.view().tokens() < window / 2),
        Err(e) => {
            let e = *e.limit().expect("a limit refusal");
            assert_eq!(e.window, window);
            assert_eq!(e.limit, c.policy().limit_tokens());
            assert!(e.tokens >= e.limit);
            assert_eq!(e.tokens, history.usage_tokens());
        }
    }
    assert_eq!(c.last_report().unwrap().tier.get(), 3);
    for e in before.entries() {
        assert_eq!(&*history.recall(e.id()).unwrap(), e);
    }
    // A tiny window: the in-flight tail alone is over the limit.
    let mut h = before.clone();
    let mut tiny = Compactor::new(Policy::for_window(50).unwrap());
    let err = *tiny.prepare(&mut h).unwrap_err().limit().unwrap();
    assert_eq!((err.window, err.limit), (50, 25));
    assert!(err.to_string().contains("limit of 25 tokens"));
}

#[test]
fn the_cap_shortens_in_the_view_and_keeps_the_original() {
    let Seed {
        mut history, trace, ..
    } = seed();
    let policy = Policy::builder()
        .entry_cap_tokens(Some(60))
        .build()
        .unwrap();
    let mut c = Compactor::new(policy);
    c.compact_at(&mut history, NonZeroU8::MIN).unwrap().unwrap();
    let item = history
        .view()
        .items()
        .iter()
        .find(|i| i.id == trace)
        .unwrap();
    let Form::Capped(m) = &item.form else {
        panic!("the trace is over the cap: {:?}", item.form)
    };
    let shown = &m.tool_results().next().unwrap().content;
    assert!(shown.contains("elided by the per-entry cap"), "{shown}");
    assert!(shown.starts_with("running 12 tests"));
    assert!(item.tokens <= 60);
    assert_eq!(
        history
            .recall(trace)
            .unwrap()
            .message()
            .tool_results()
            .next()
            .unwrap()
            .content,
        TRACE
    );
}

#[test]
fn keep_recent_keeps_the_last_exchanges_verbatim() {
    let Seed { mut history, .. } = seed();
    let policy = Policy::builder().keep_recent(2).build().unwrap();
    let mut c = Compactor::new(policy);
    let before = history.clone();
    c.compact_at(&mut history, NonZeroU8::new(3).unwrap())
        .unwrap()
        .unwrap();
    // The last two consumed exchanges (edit call + result, the assistant's note) and the
    // tail are verbatim; the earlier ones are gone.
    let kept: Vec<_> = history.view().items().iter().map(|i| i.id.0).collect();
    let tail: Vec<_> = before
        .view()
        .items()
        .iter()
        .rev()
        .take(5)
        .map(|i| i.id.0)
        .rev()
        .collect();
    assert_eq!(kept, tail);
}

#[test]
fn a_failing_summarizer_falls_back_to_the_builtin_one() {
    struct Down;
    impl favur_context::compact::Summarizer for Down {
        fn summarize(
            &self,
            _: &favur_context::compact::SummaryRequest<'_>,
        ) -> Result<String, favur_context::compact::SummarizeError> {
            Err(favur_context::compact::SummarizeError::new(
                "model timed out after 30 s",
            ))
        }
    }
    let Seed {
        mut history,
        listing,
        ..
    } = seed();
    let mut c = Compactor::with_summarizer(Policy::default(), Down);
    let r = c.compact_at(&mut history, NonZeroU8::MIN).unwrap().unwrap();
    assert_eq!(r.fallbacks.len(), r.summaries.len());
    assert_eq!(r.summarizer_calls, r.summaries.len());
    assert!(
        r.fallbacks
            .iter()
            .all(|f| f.error == "model timed out after 30 s")
    );
    assert!(r.to_string().contains("fallback"));
    assert!(fate(&history, listing).starts_with("summary"));
}

#[test]
fn async_compaction_matches_sync_compaction() {
    use crate::common::{RunByRun, block_on};
    let Seed { history, .. } = seed();
    let window = history.usage_tokens() * 100 / 7;
    let mut sync_h = history.clone();
    let mut async_h = history.clone();
    let mut sync_c = Compactor::new(Policy::for_window(window).unwrap());
    let mut async_c = Compactor::with_summarizer(Policy::for_window(window).unwrap(), RunByRun);
    sync_c.prepare(&mut sync_h).unwrap();
    block_on(async_c.prepare_async(&mut async_h)).unwrap();
    assert_eq!(sync_h.view(), async_h.view());
    assert_eq!(sync_h.entries(), async_h.entries());
    assert_eq!(sync_c.last_report(), async_c.last_report());
}

#[test]
fn the_builtin_summarizer_keeps_errors_identifiers_and_counts_within_budget() {
    let mut h = History::new();
    let mut log = String::from("$ python -m pytest tests/test_api.py\n");
    for i in 0..400 {
        log.push_str(&format!("tests/test_api.py::test_case_{i} PASSED\n"));
    }
    log.push_str("Traceback (most recent call last):\n  File \"app/api.py\", line 88, in handle\n    return decode(body)\nValueError: invalid literal for int() with base 10: 'x'\nexit code 1\n");
    for i in 0..200 {
        log.push_str(&format!("teardown step {i} done\n"));
    }
    h.append(fuzzy!(tool_call: "p1", "bash", serde_json::json!({"command": "python -m pytest tests/test_api.py"})));
    let id = h.append(strict!(tool_error("p1"): "{log}"));
    let entries: Vec<_> = h.entries().iter().collect();
    let budget = 200;
    let text =
        favur_context::compact::BuiltinSummarizer::default().summarize_entries(&entries, budget);
    let tokens = favur_context::tokens::HeuristicCounter.count_text(&text);
    assert!(tokens <= budget, "over budget: {tokens} tokens");
    assert!(
        text.contains("bash `python -m pytest tests/test_api.py`"),
        "what produced the result: {text}"
    );
    assert!(
        text.contains("[error] exit code 1"),
        "the exit status: {text}"
    );
    assert!(
        text.contains("Traceback (most recent call last):"),
        "{text}"
    );
    assert!(text.contains("ValueError: invalid literal"), "{text}");
    assert!(
        text.contains("app/api.py:88 in handle"),
        "the frame: {text}"
    );
    assert!(text.contains(&format!("{id} ")), "{text}");
    // 400 passing tests are not 400 lines of summary.
    assert!(text.matches("PASSED").count() < 20, "{text}");
    insta::assert_snapshot!("builtin_summary_pytest", text);
}

mod common;
