//! The call-site ledger on a small agent whose one tool is misclassified: the regret
//! events name that tool's call site, live, reopened from JSON and from a journal.

mod common;

use std::collections::HashMap;
use std::num::NonZeroU8;
use std::sync::{Arc, Mutex};

use favur_context::audit::{Fate, Ledger, REGRET_TARGET, RegretEvent, RegretKind};
use favur_context::journal::JournaledHistory;
use favur_context::{Compactor, History, Message, Policy, Retention, Store, ToolCall, strict};
use serde_json::json;

// Lists a directory: spent once read, rightly forgettable.
common::tool!(ListDir: forgettable, "list_dir", "List a directory", json!({"type": "object"}),
|args| {
    let dir = args["path"].as_str().unwrap_or(".");
    Ok((0..12).map(|i| format!("{dir}/file_{i}.rs\n")).collect())
});

// Runs the test suite: the failures matter until they are fixed, so this class is wrong.
common::tool!(RunTests: forgettable, "run_tests", "Run the tests", json!({"type": "object"}),
    |_| Err((0..8)
        .map(|i| format!("test parse::case_{i} ... FAILED at src/parse.rs:{}:5\n", 100 + i))
        .collect()));

/// What the run produced: the history, the live ledger, and the line of the one
/// `run_tool` call that classifies `RunTests` results.
struct Run {
    history: History,
    ledger: Ledger,
    run_tests_line: u32,
    /// The line of the `run_tool` call for `ListDir`.
    list_line: u32,
    /// The order things happened in: `Ok(entry id)` for a record, `Err(n)` for the n-th
    /// compaction.
    order: Vec<Result<u64, usize>>,
}

/// The agent: ten rounds of listing a new directory, running the same tests every other
/// round, with the default tiers on a small window compacting before every model request.
fn agent() -> Run {
    // Every compaction that is due fires (no minimum reclaim), so entries leave the view.
    let policy = Policy::builder()
        .window_tokens(3_000)
        .min_reclaim(0.0)
        .build()
        .expect("valid policy");
    let mut compactor = Compactor::new(policy);
    let mut history = History::new();
    let mut ledger = Ledger::new();
    history.pin(strict!(system: "You are a coding agent."));
    history.append(strict!(user: "Make the parser tests pass."));
    ledger.observe(&history);
    let mut run_tests_line = 0;
    let mut list_line = 0;
    let mut order = vec![Ok(0), Ok(1)];
    let mut compact = |history: &mut History, order: &mut Vec<Result<u64, usize>>| {
        if compactor.compact(history).expect("in memory").is_some() {
            order.push(Err(history.compactions().len() - 1));
        }
    };
    let record = |history: &History, order: &mut Vec<Result<u64, usize>>, n: u64| {
        let next = history.next_id().0;
        order.extend((next - n..next).map(Ok));
    };
    for round in 0..10 {
        compact(&mut history, &mut order);
        ledger.observe(&history);
        let ls = ToolCall::new(
            format!("l{round}"),
            "list_dir",
            json!({"path": format!("src/m{round}")}),
        );
        history.append(Message::assistant_calls([ls.clone()]).classify(Retention::Fuzzy));
        list_line = line!() + 1;
        history.run_tool(&ListDir, &ls);
        record(&history, &mut order, 2);
        ledger.observe(&history);

        if round % 2 == 1 {
            continue;
        }
        compact(&mut history, &mut order);
        ledger.observe(&history);
        let test = ToolCall::new(format!("t{round}"), "run_tests", json!({"filter": "parse"}));
        history.append(Message::assistant_calls([test.clone()]).classify(Retention::Fuzzy));
        run_tests_line = line!() + 1;
        history.run_tool(&RunTests, &test);
        record(&history, &mut order, 2);
        ledger.observe(&history);
    }
    Run {
        history,
        ledger,
        run_tests_line,
        list_line,
        order,
    }
}

fn assert_names_run_tests(events: &[RegretEvent], line: u32) {
    assert!(
        !events.is_empty(),
        "the misclassified tool produced no regret"
    );
    for e in events {
        assert!(e.site.file().ends_with("audit.rs"), "{e}");
        assert_eq!(e.site.line(), line, "{e}");
        assert_eq!(e.class, Retention::Forgettable);
        assert!(!e.fate.in_view());
        assert!(e.cost_tokens > 0);
        match &e.kind {
            RegretKind::RepeatedCall { tool, call } => {
                assert_eq!(tool, "run_tests");
                assert_eq!(call, r#"run_tests {"filter":"parse"}"#);
            }
            other => panic!("unexpected regret {other:?}"),
        }
    }
}

#[test]
fn a_misclassified_tool_is_named_by_its_regret_events() {
    let run = agent();
    let events = run.ledger.regrets();
    assert_names_run_tests(events, run.run_tests_line);
    // Every repeat after the first run whose earlier results had all left the view.
    let repeats = events.len();
    assert!((2..=4).contains(&repeats), "{repeats} repeats");

    let sites = run.ledger.sites();
    let top = &sites[0];
    assert!(
        top.site
            .contains(&format!("audit.rs:{}:", run.run_tests_line)),
        "{}",
        top.site
    );
    assert_eq!(
        (top.class, top.entries, top.regrets),
        (Retention::Forgettable, 5, repeats as u64)
    );
    assert_eq!(
        top.regret_tokens,
        events.iter().map(|e| e.cost_tokens).sum::<u64>()
    );
    assert!(top.left_view() >= repeats as u64);
    assert!(
        top.dropped
            .keys()
            .chain(top.summarized.keys())
            .all(|t| (1..=3).contains(&t.get()))
    );
    // The rightly forgettable listing never came back: no regret for it.
    let listing = sites
        .iter()
        .find(|s| s.site.contains(&format!("audit.rs:{}:", run.list_line)))
        .expect("listing site");
    assert_eq!(listing.regrets, 0);
    assert_eq!(listing.entries, 10);
    // Tokens in view never exceed what the view holds.
    let in_view: u64 = sites.iter().map(|s| s.tokens_in_view).sum();
    let pinned: u64 = run
        .history
        .pinned()
        .iter()
        .map(|id| u64::from(run.history.recall(*id).unwrap().tokens()))
        .sum();
    assert_eq!(in_view, run.history.view().tokens() + pinned);
}

#[test]
fn a_reopened_history_gives_the_same_fates_and_no_regret_the_live_ledger_did_not_find() {
    let run = agent();
    let reopened = History::from_json(&run.history.to_json()).expect("round trip");
    let ledger = Ledger::of(&reopened);
    let without_regret = |l: &Ledger| {
        let mut sites = l.sites();
        for s in &mut sites {
            (s.regrets, s.regret_tokens) = (0, 0);
            s.regret_kinds.clear();
        }
        sites.sort_by(|a, b| a.site.cmp(&b.site));
        sites
    };
    assert_eq!(without_regret(&ledger), without_regret(&run.ledger));
    // Observed at once, the history does not say when its drop-only compactions happened;
    // the ledger places them late, so it finds a subset of the live events.
    let live: Vec<_> = run
        .ledger
        .regrets()
        .iter()
        .map(|e| (e.evicted, e.at))
        .collect();
    assert!(!ledger.regrets().is_empty());
    for e in ledger.regrets() {
        assert!(live.contains(&(e.evicted, e.at)), "{e} not found live");
    }
}

#[test]
fn a_journal_observed_as_it_is_written_and_reopened_gives_the_same_regrets() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("agent.jsonl");
    let run = agent();
    {
        // Write the same history through a journal, observing it after each record.
        let mut journal = JournaledHistory::open(&path).expect("open");
        let mut live = Ledger::new();
        for step in &run.order {
            match step {
                Err(n) => journal
                    .apply(
                        run.history
                            .compaction_in_full(&run.history.compactions()[*n])
                            .expect("its summaries are held"),
                    )
                    .expect("apply"),
                Ok(id) => {
                    let e = run
                        .history
                        .recall(favur_context::EntryId(*id))
                        .expect("held");
                    if e.kind().is_summary() {
                        continue;
                    }
                    let classified = favur_context::Classified::with_site(
                        e.message().clone(),
                        e.retention(),
                        e.site().clone(),
                    );
                    if matches!(e.kind(), favur_context::message::EntryKind::Pinned) {
                        journal.pin(classified).expect("pin");
                    } else {
                        journal.append(classified).expect("append");
                    }
                }
            }
            live.observe(journal.history());
        }
        assert_eq!(live.unseen(), 0);
        assert_eq!(live.regrets().len(), run.ledger.regrets().len());
    }
    // Read back in the order its records were written: exactly the live events.
    let (ledger, reopened, report) =
        Ledger::of_journal(std::fs::File::open(&path).expect("file")).expect("read");
    assert!(report.is_clean());
    assert_eq!(reopened.len(), run.history.len());
    assert_eq!(ledger.regrets(), run.ledger.regrets());
    assert_eq!(ledger.sites(), run.ledger.sites());
    assert_names_run_tests(ledger.regrets(), run.run_tests_line);
}

/// Captures the events on the regret target emitted by one thread. It is the global
/// default (a thread-local one races with the other tests' threads over tracing's
/// per-callsite interest cache), so it keeps only the test thread's events.
#[derive(Clone)]
struct Capture {
    events: Arc<Mutex<Vec<HashMap<String, String>>>>,
    thread: std::thread::ThreadId,
}

struct Fields<'a>(&'a mut HashMap<String, String>);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        if event.metadata().target() == REGRET_TARGET && std::thread::current().id() == self.thread
        {
            let mut fields = HashMap::new();
            event.record(&mut Fields(&mut fields));
            self.events.lock().expect("lock").push(fields);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn regret_events_are_emitted_on_the_regret_target() {
    let capture = Capture {
        events: Arc::default(),
        thread: std::thread::current().id(),
    };
    tracing::subscriber::set_global_default(capture.clone()).expect("the only global subscriber");
    let run = agent();
    let seen = capture.events.lock().expect("lock").clone();
    assert_eq!(seen.len(), run.ledger.regrets().len());
    for (fields, e) in seen.iter().zip(run.ledger.regrets()) {
        assert_eq!(fields["kind"], "repeated call");
        assert_eq!(fields["site"], e.site.to_string());
        assert!(fields["site"].contains(&format!("audit.rs:{}:", run.run_tests_line)));
        assert_eq!(fields["class"], "forgettable");
        assert_eq!(fields["cost_tokens"], e.cost_tokens.to_string());
        assert_eq!(fields["tier"], e.fate.tier().unwrap().to_string());
    }
}

#[test]
fn a_recall_of_an_evicted_entry_is_a_regret_and_of_a_kept_one_is_not() {
    use favur_context::forgettable;
    use favur_context::tools::RecallTool;
    let mut h = History::new();
    let mut ledger = Ledger::new();
    let kept = h.append(strict!(user: "the plan"));
    let gone = h.append(forgettable!(tool_result("c0"): "Traceback: src/a.py:3"));
    ledger.observe(&h);
    common::drop_at(&mut h, 2, gone);
    ledger.observe(&h);
    for (n, id) in [(1, kept), (2, gone)] {
        let call = ToolCall::new(format!("r{n}"), "recall", json!({"id": id.0}));
        h.append(Message::assistant_calls([call.clone()]).classify(Retention::Fuzzy));
        let answer = RecallTool.respond(&h, &call, Retention::Fuzzy);
        h.append(answer);
    }
    let found = ledger.observe(&h).to_vec();
    assert_eq!(found.len(), 1);
    assert_eq!(
        (found[0].kind.clone(), found[0].evicted, found[0].fate),
        (
            RegretKind::Recall,
            gone,
            Fate::Dropped {
                tier: NonZeroU8::new(2).unwrap()
            }
        )
    );
    assert_eq!(
        found[0].cost_tokens,
        u64::from(h.recall(found[0].at).unwrap().tokens())
    );
}

#[test]
fn fates_follow_summaries_placeholders_and_dropped_summaries() {
    use favur_context::compact::{Compaction, Edit};
    use favur_context::message::{CallSite, EntryKind};
    use favur_context::render::Form;
    use favur_context::{Entry, fuzzy};
    let mut h = History::new();
    let a = h.append(fuzzy!(user: "first view of src/a.rs"));
    let b = h.append(fuzzy!(user: "second view of src/b.rs"));
    let call = h.append(strict!(tool_call: "c1", "bash", json!({"command": "ls"})));
    let result = h.append(fuzzy!(tool_result("c1"): "a.rs b.rs"));
    let mut ledger = Ledger::new();
    ledger.observe(&h);
    // Tier 1: a and b summarized; the result becomes a placeholder pointing at the summary.
    let summary = Entry::new(
        h.next_id(),
        Retention::Fuzzy,
        5,
        CallSite::new("<compaction>", 1, 0),
        EntryKind::Summary {
            replaces: vec![a, b],
        },
        Message::assistant("views of src/a.rs and src/b.rs"),
    );
    let summary_id = summary.id();
    let placeholder = Edit::Reform {
        id: result,
        form: Form::Placeholder {
            summary: Some(summary_id),
        },
        tokens: 2,
    };
    h.apply(Compaction {
        tier: NonZeroU8::MIN,
        edits: vec![
            Edit::Summarize {
                summary: summary.into(),
            },
            placeholder,
        ],
        usage_after: None,
    })
    .unwrap();
    ledger.observe(&h);
    assert_eq!(
        ledger.fate(a),
        Some(Fate::Summarized {
            tier: NonZeroU8::MIN
        })
    );
    assert_eq!(
        ledger.fate(result),
        Some(Fate::Summarized {
            tier: NonZeroU8::MIN
        })
    );
    assert_eq!(ledger.fate(call), Some(Fate::Kept));
    // Tier 3 drops the summary: what it stood for is dropped, at tier 3.
    common::drop_at(&mut h, 3, summary_id);
    ledger.observe(&h);
    assert_eq!(
        (ledger.fate(a), ledger.fate(b)),
        (
            Some(Fate::Dropped {
                tier: NonZeroU8::new(3).unwrap()
            }),
            Some(Fate::Dropped {
                tier: NonZeroU8::new(3).unwrap()
            })
        )
    );
    assert_eq!(
        ledger.fate(result),
        Some(Fate::Summarized {
            tier: NonZeroU8::MIN
        }),
        "a placeholder stays in the view"
    );
    let sites = ledger.sites();
    let in_view: u64 = sites.iter().map(|s| s.tokens_in_view).sum();
    assert_eq!(in_view, h.view().tokens());
    let dropped: u64 = sites
        .iter()
        .map(|s| {
            s.dropped
                .get(&NonZeroU8::new(3).unwrap())
                .copied()
                .unwrap_or(0)
        })
        .sum();
    assert_eq!(dropped, 2);
    // Summaries are the compaction's, not a call site's: not counted as entries.
    assert_eq!(sites.iter().map(|s| s.entries).sum::<u64>(), 4);
}
