//! Exact-text spans: what counts as one, and whether it survives a compaction; the cache
//! figures per compaction; `--sweep`.

use super::common;

use crate::cache_bill::Bill;
use crate::replay::{Fate, Prepared, Run, replay};
use crate::report::Summary;
use crate::span_tally::lost;
use crate::spans::{candidates, quoted};
use crate::strategy::{NoCompaction, Strategy, TrimOldest};
use crate::transcript::ClassifiedTranscript;
use common::{PlainRenderer, call, hand_rules, prepare, result};
use favur_context::import::Format;
use serde_json::json;

/// The span texts of message `i`.
fn span_texts(p: &Prepared, i: usize) -> Vec<(&str, usize)> {
    p.spans(i)
        .iter()
        .map(|s| (s.text.as_str(), s.source))
        .collect()
}

#[test]
fn quoted_strings_single_double_escaped_and_not_apostrophes() {
    let q = quoted(
        "It's the model's 'first quoted string' and x = \"a \\\"nested\\\" one\" then 'unclosed",
    );
    assert_eq!(q, ["first quoted string", "a \\\"nested\\\" one"]);
    // One line each: a quote does not close on the next line.
    assert!(quoted("'open\nclose'").is_empty());
    // Contents are trimmed.
    assert_eq!(quoted("f('  padded value  ')"), ["padded value"]);
}

#[test]
fn candidates_are_quoted_strings_and_command_lines_of_16_chars_or_more() {
    let cmd = "cat <<'EOF' > /tmp/fix.py\n        return self._js_lists\n    x = 12345678901\n  y = 123456789012  \nEOF"
        .to_owned();
    let cmds = [cmd];
    let c = candidates(
        "Replace 'fifteen chars!!' and 'sixteen chars!!!' please.",
        &cmds,
    );
    // 15 characters (trimmed) is too short, 16 is enough; the heredoc's lines count.
    assert_eq!(
        c,
        [
            "sixteen chars!!!",
            "cat <<'EOF' > /tmp/fix.py",
            "return self._js_lists",
            "y = 123456789012",
        ]
    );
    assert!(!c.contains(&"x = 12345678901"), "15 characters");
}

/// A run where the agent copies lines from a file view into a heredoc: one line first
/// seen in the view, one it typed itself before the view showed it, one from the task.
fn copied() -> serde_json::Value {
    json!([
        {"role": "system", "content": "You are an agent. Always say: system says hello there."},
        {"role": "user", "content": "Fix it. The task mentions task_only_line = True."},
        call("c1", "echo 'typed_by_agent_first = 1' >> a.py && cat a.py"),
        result("c1", "def media_property(cls):\n    typed_by_agent_first = 1\n    task_only_line = True\n    system says hello there\n"),
        call("c2", "cat <<'EOF' > a.py\ndef media_property(cls):\n    typed_by_agent_first = 1\n    task_only_line = True\n    system says hello there\nEOF"),
        result("c2", ""),
        {"role": "assistant", "content": "Done."},
    ])
}

#[test]
fn a_span_first_occurs_in_a_tool_output_not_typed_first_nor_in_system_or_task() {
    let p = prepare(copied(), &hand_rules());
    // Message 4 (the heredoc) copies one line first seen in the output at 3.
    assert_eq!(span_texts(&p, 4), [("def media_property(cls):", 3)]);
    // The agent's first command has no span: its quoted string is its own.
    assert!(p.spans(2).is_empty());
    // Only assistant messages have spans.
    assert!(p.spans(3).is_empty() && p.spans(0).is_empty());
}

#[test]
fn a_plain_chat_agent_s_fenced_command_gives_its_lines() {
    let json2 = json!({"instance_id": "plain", "format": "mini-swe-agent-1", "messages": [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the parser."},
        {"role": "assistant", "content": "THOUGHT: look\n\n```bash\ncat src/parser.rs\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n    fn parse_expr(&self) -> Expr {\n</output>"},
        {"role": "assistant", "content": "THOUGHT: edit\n\n```bash\ngrep -n \"fn parse_expr(&self) -> Expr\" src/parser.rs\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n1\n</output>"},
        {"role": "assistant", "content": "THOUGHT: done\n\n```bash\necho done\n```"}
    ]});
    let t = ClassifiedTranscript::from_value("plain", Format::MiniSweAgent, &json2, &hand_rules())
        .unwrap();
    let p = Prepared::new(t);
    let step = p
        .transcript()
        .messages
        .iter()
        .position(|m| m.classified.message().text().contains("grep -n"))
        .unwrap();
    assert_eq!(
        span_texts(&p, step),
        [("fn parse_expr(&self) -> Expr", step - 1)]
    );
}

/// Two file views, each copied back later; a trim budget that drops the oldest view but
/// keeps the newest.
fn two_views() -> serde_json::Value {
    let old = "def old_function_name(arg):\n".to_owned()
        + &"    filler line of the old file\n".repeat(40);
    let new = "def new_function_name(arg):\n    return 1\n";
    json!([
        {"role": "user", "content": "Fix both files."},
        call("c1", "cat old.py"),
        result("c1", &old),
        call("c2", "cat new.py"),
        result("c2", new),
        call("c3", "python - <<'EOF'\ndef old_function_name(arg):\ndef new_function_name(arg):\nEOF"),
        result("c3", "ok"),
        {"role": "assistant", "content": "Done."},
    ])
}

fn run(p: &Prepared, s: &mut dyn Strategy) -> Run {
    replay(p, s, Some(&PlainRenderer), &mut |_, _| Ok(())).unwrap()
}

#[test]
fn a_span_whose_source_was_dropped_is_lost_and_a_kept_one_survives() {
    let p = prepare(two_views(), &hand_rules());
    assert_eq!(
        span_texts(&p, 5),
        [
            ("def old_function_name(arg):", 2),
            ("def new_function_name(arg):", 4)
        ]
    );
    // Without compaction both survive.
    let none = Summary::of(&run(&p, &mut NoCompaction), &p);
    assert_eq!((none.spans.all.total, none.spans.all.survived), (2, 2));

    // A budget that leaves room for the newest view, not the old one.
    let mut trim = TrimOldest { budget: 120 };
    let r = run(&p, &mut trim);
    let step = r.steps.iter().find(|s| s.message == 5).unwrap();
    assert!(step.event.is_some(), "trim compacted before the heredoc");
    let by_source: Vec<(usize, bool, Fate)> = step
        .spans
        .iter()
        .map(|o| (o.source, o.survived, o.fate))
        .collect();
    assert_eq!(
        by_source,
        [(2, false, Fate::Dropped), (4, true, Fate::Verbatim)]
    );
    let s = Summary::of(&r, &p);
    assert_eq!((s.spans.all.total, s.spans.all.survived), (2, 1));
    // The class of the source: `cat` output is fuzzy in the hand rules.
    assert_eq!(
        s.spans.by_class[favur_context::Retention::Fuzzy.index()].total,
        2
    );
    let l = lost(&r, &p);
    assert_eq!(l.len(), 1);
    assert_eq!(
        (l[0].text.as_str(), l[0].source),
        ("def old_function_name(arg):", 2)
    );
    assert_eq!(
        l[0].step,
        r.steps.iter().position(|s| s.message == 5).unwrap()
    );
}

#[test]
fn a_compaction_re_bills_everything_after_the_unchanged_prefix() {
    let p = prepare(two_views(), &hand_rules());
    let mut trim = TrimOldest { budget: 120 };
    let r = run(&p, &mut trim);
    let bills = Bill::all(&r);
    let s = Summary::of(&r, &p);
    assert_eq!(bills.len() as u64, s.compactions.values().sum::<u64>());
    assert!(!bills.is_empty());
    for b in &bills {
        let step = &r.steps[b.step];
        assert!((b.rebilled + b.reads - step.tokens as f64).abs() < 1e-6);
        // Trimming drops the front: little or nothing of the request is reused.
        assert!(b.rebilled > b.reads, "{b:?}");
    }
    assert_eq!(s.cache.compactions, bills.len() as u64);
    let rebilled: f64 = bills.iter().map(|b| b.rebilled).sum();
    assert!((s.cache.rebilled - rebilled).abs() < 1e-6);
    // Without compaction nothing is re-billed by a compaction.
    let none = Summary::of(&run(&p, &mut NoCompaction), &p);
    assert_eq!(none.cache.compactions, 0);
    assert_eq!(none.cache.rebilled, 0.0);
}

#[test]
fn sweep_prints_four_windows_for_every_strategy_and_draws_one_chart() {
    let d = std::env::temp_dir().join(format!("favur-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let t = d.join("t.json");
    std::fs::write(&t, two_views().to_string()).unwrap();
    let svg = d.join("sweep.svg");
    let argv = [
        "replay".to_owned(),
        t.display().to_string(),
        "--rules".into(),
        common::RULES.into(),
        "--policy".into(),
        "default".into(),
        "--sweep".into(),
        "--sweep-svg".into(),
        svg.display().to_string(),
    ];
    let args = common::parse_args::<crate::wiring::ReplayArgs>(argv);
    let report = crate::wiring::replay_command(&args).unwrap();
    for window in ["100k", "150k", "200k", "300k"] {
        for strategy in ["policy", "trim-oldest", "mask-old", "no compaction"] {
            assert!(
                report.contains(&format!("| {window} | {strategy} |")),
                "{window} {strategy}: {report}"
            );
        }
    }
    // Nothing is compacted in so small a run: every strategy keeps both spans at 1.00x.
    assert!(report.contains("| 200k | no compaction | "));
    assert!(report.contains("| 1.000 | 1.000 | 1.000 |"), "{report}");
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.contains("<svg") && drawn.contains("span survival") && drawn.contains("300k: "));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_dump_report_lists_the_lost_spans_and_every_compaction() {
    let rules = hand_rules();
    let transcripts = [prepare(two_views(), &rules)];
    let path = std::env::temp_dir().join(format!("favur-spans-dump-{}.jsonl", std::process::id()));
    // The strategy under test here is trim-oldest: its compactions lose the old view.
    let factory = || -> Result<Box<dyn Strategy>, crate::ReplayError> {
        Ok(Box::new(TrimOldest { budget: 120 }))
    };
    let policy = favur_context::Policy::default();
    let job = crate::cli::Job {
        transcripts: &transcripts,
        policy: &factory,
        renderer: &PlainRenderer,
        window: 200_000,
        dump: Some(path.clone()),
        svg: None,
        baselines: false,
    };
    let outcome = crate::cli::run(&job).unwrap();
    let _ = std::fs::remove_file(&path);
    let report = crate::cli::render_report(&outcome, &rules, policy.tiers());
    // Requests come before messages 1, 3, 5 and 7: the heredoc (message 5) is request 2.
    assert!(
        report.contains("| hand | 2 | 2 | fuzzy | dropped | `def old_function_name(arg):` |"),
        "{report}"
    );
    assert!(
        !report.contains("`def new_function_name(arg):`"),
        "{report}"
    );
    let bills = Bill::all(&outcome.policy_runs[0]);
    assert!(!bills.is_empty());
    for b in bills {
        let row = format!(
            "| hand | {} | 0 | {} | {:.0} | {:.0} |",
            b.step, b.tokens, b.rebilled, b.reads
        );
        assert!(report.contains(&row), "{row}\n{report}");
    }
    // Without a dump neither list is printed.
    let quiet = crate::cli::Job { dump: None, ..job };
    let report =
        crate::cli::render_report(&crate::cli::run(&quiet).unwrap(), &rules, policy.tiers());
    assert!(!report.contains("Spans the policy lost"));
}

#[test]
fn sweep_refuses_a_window_a_dump_or_no_baselines() {
    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: crate::wiring::ReplayArgs,
    }
    let base = [
        "x", "t.json", "--rules", "r.toml", "--policy", "default", "--sweep",
    ];
    for extra in [
        &["--window", "1000"][..],
        &["--dump", "d.jsonl"],
        &["--no-baselines"],
    ] {
        let argv = base.iter().chain(extra.iter());
        assert!(
            <Cli as clap::Parser>::try_parse_from(argv).is_err(),
            "{extra:?}"
        );
    }
    // --sweep-svg needs --sweep.
    let argv = [
        "x",
        "t.json",
        "--rules",
        "r.toml",
        "--policy",
        "default",
        "--sweep-svg",
        "s.svg",
    ];
    assert!(<Cli as clap::Parser>::try_parse_from(argv).is_err());
    assert!(<Cli as clap::Parser>::try_parse_from(base).is_ok());
}
