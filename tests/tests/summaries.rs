//! What compaction writes in place of entries, on real runs: every shared trace is
//! replayed with the shipped rules and the default policy (200k window), and every
//! summary the built-in summarizer wrote is checked against the entries it replaced.

mod common;

use std::path::PathBuf;

use favur_context::import::rules::Rules;
use favur_context::import::{self, Format};
use favur_context::message::EntryKind;
use favur_context::{Compactor, Entry, History, Policy, Role};

/// The shared traces (a missing folder fails the test in CI, see `common::traces_dir`).
fn traces() -> Option<Vec<PathBuf>> {
    let dir = common::traces_dir()?;
    let files = common::trace_files(&dir);
    assert!(!files.is_empty(), "no traces under {}", dir.display());
    Some(files)
}

/// The history of a trace replayed as a live agent: compaction before each request.
fn replay(path: &PathBuf, rules: &Rules) -> History {
    let text = std::fs::read_to_string(path).expect("readable trace");
    let messages = import::parse(Format::MiniSweAgent, &text)
        .and_then(|t| t.classify(rules))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut history = History::new();
    let mut compactor = Compactor::new(Policy::default());
    for m in messages {
        if m.classified.message().role == Role::Assistant {
            compactor
                .compact(&mut history)
                .expect("an in-memory history records every compaction");
        }
        if m.pin {
            history.pin(m.classified);
        } else {
            history.append(m.classified);
        }
    }
    history
}

/// Whether `e` is output of something: a tool result, or a plain-chat observation (a user
/// message right after an assistant turn that ran a fenced command).
fn is_output(history: &History, e: &Entry) -> bool {
    match e.message().role {
        Role::Tool => true,
        Role::User if e.id().0 > 0 => history
            .recall(favur_context::EntryId(e.id().0 - 1))
            .is_ok_and(|prev| {
                prev.message().role == Role::Assistant && prev.message().text().contains("```bash")
            }),
        _ => false,
    }
}

#[test]
fn every_summarized_output_says_what_produced_it() {
    let Some(files) = traces() else { return };
    let rules = Rules::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../rules/coding-agent-shell.toml"
    ))
    .expect("the shipped rules load");
    let (mut summaries, mut outputs) = (0usize, 0usize);
    for path in &files {
        let history = replay(path, &rules);
        for s in history.entries() {
            let EntryKind::Summary { replaces } = s.kind() else {
                continue;
            };
            summaries += 1;
            let text = s.message().text();
            let described_to = text
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix("(and "))
                .is_some();
            for id in replaces {
                let member = history.recall(*id).expect("every original is recallable");
                if member.kind().is_summary() || !is_output(&history, &member) {
                    continue;
                }
                let header = text.lines().find(|l| l.starts_with(&format!("{id} ")));
                let Some(header) = header else {
                    assert!(
                        described_to,
                        "{}: {id} is not described in\n{text}",
                        path.display()
                    );
                    continue;
                };
                outputs += 1;
                let produced = header.contains('`')
                    || header.contains(" output of #")
                    || header.contains(" result of #");
                assert!(
                    produced && !header.contains("result of call"),
                    "{}: the header of {id} does not say what produced it: {header}",
                    path.display()
                );
            }
        }
    }
    assert!(summaries > 100, "only {summaries} summaries written");
    assert!(outputs > 200, "only {outputs} outputs summarized");
    eprintln!("{summaries} summaries, {outputs} summarized outputs, each naming its producer");
}
