//! Kills a real writer process (SIGKILL) at random moments, many times over, and checks on
//! every reopening that each append and compaction it acknowledged is there and that the
//! view rebuilds (the same view as the independent JSON replay of the same history).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use favur_context::journal::{JournalError, JournaledHistory, OpenOptions};
use favur_context::{EntryId, History};

const ROUNDS: usize = 30;

/// What the writer appends with id `id` (the rule in `src/bin/journal_writer.rs`).
fn message_text(id: u64) -> String {
    let mut text = format!("message {id}");
    if id % 10 == 7 {
        text.push(' ');
        text.push_str(&"x".repeat(1 << 16));
    }
    text
}

/// Entries in each batch the writer records, and the text of entry `k` of the batch whose
/// first id is `first` (the rule in `src/bin/journal_writer.rs`).
const BATCH: u64 = 12;
fn batch_text(first: u64, k: u64) -> String {
    format!("batch {first} {k} {}", "y".repeat(4096))
}

/// Every batch in `history`, as (first id, entries of it found): all or nothing means each
/// count is [`BATCH`].
fn batches(history: &History) -> std::collections::BTreeMap<u64, u64> {
    let mut found = std::collections::BTreeMap::new();
    for e in history.entries() {
        let text = e.message().text();
        if let Some(rest) = text.strip_prefix("batch ") {
            let first: u64 = rest.split(' ').next().unwrap().parse().unwrap();
            *found.entry(first).or_insert(0) += 1;
        }
    }
    found
}

// The kill times come from a generator seeded from the clock; the seed is printed so a
// failing run can be reproduced by setting `FAVUR_KILL_SEED`.

#[test]
fn sigkilled_writer_loses_nothing_it_acknowledged() {
    let seed = std::env::var("FAVUR_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                | 1
        });
    eprintln!("kill test seed: {seed} (FAVUR_KILL_SEED={seed} to reproduce)");
    let mut rng = fastrand::Rng::with_seed(seed);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.jsonl");
    let started = Instant::now();

    let mut acknowledged: Vec<u64> = Vec::new();
    let mut compactions_acked = 0usize;
    let mut engine_acked = 0usize;
    let mut torn_tails = 0usize;
    let mut batches_acked: Vec<u64> = Vec::new();
    for round in 0..ROUNDS {
        let mode = if round % 3 == 2 { "sync" } else { "flush" };
        let mut child = Command::new(env!("CARGO_BIN_EXE_journal_writer"))
            .arg(&path)
            .arg(mode)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the writer");
        // Kill at a random moment: anywhere from during its open to well into its loop.
        std::thread::sleep(Duration::from_millis(rng.u64(..250)));
        child.kill().expect("SIGKILL the writer");
        let status = child.wait().unwrap();
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(err.is_empty(), "round {round}: writer failed: {err}");
        assert!(!status.success(), "round {round}: writer was not killed");

        // Only complete lines: a cut-off last line may be a prefix of an id.
        let complete = match out.rfind('\n') {
            Some(end) => &out[..=end],
            None => "",
        };
        let mut acked_this_round = Vec::new();
        let mut batches_this_round = Vec::new();
        let mut last_compaction_next = None;
        for line in complete.lines() {
            match line.split_once(' ') {
                Some(("A", id)) => acked_this_round.push(id.parse::<u64>().unwrap()),
                Some(("C", rest)) => {
                    compactions_acked += 1;
                    let (next, engine) = match rest.split_once(' ') {
                        Some((next, "engine")) => (next, true),
                        _ => (rest, false),
                    };
                    engine_acked += usize::from(engine);
                    last_compaction_next = Some(next.parse::<u64>().unwrap());
                }
                Some(("B", rest)) => {
                    let (first, n) = rest.split_once(' ').unwrap();
                    assert_eq!(n.parse::<u64>().unwrap(), BATCH);
                    batches_this_round.push(first.parse::<u64>().unwrap());
                }
                _ => panic!("round {round}: unexpected writer output {line:?}"),
            }
        }

        let history = JournaledHistory::open(&path)
            .unwrap_or_else(|e| panic!("round {round}: reopening after SIGKILL failed: {e}"));
        if history.report().torn_tail.is_some() {
            torn_tails += 1;
        }
        assert!(history.report().salvaged.is_none());
        for &id in &acked_this_round {
            let entry = history
                .history()
                .recall(EntryId(id))
                .unwrap_or_else(|e| panic!("round {round}: acknowledged #{id} is lost: {e}"));
            assert!(
                entry.message().text() == message_text(id),
                "round {round}: #{id} differs"
            );
        }
        if let Some(next) = last_compaction_next {
            assert!(
                history.history().next_id().0 >= next,
                "round {round}: acknowledged compaction lost"
            );
        }
        assert!(history.history().compactions().len() >= compactions_acked);
        for &first in &batches_this_round {
            for k in 0..BATCH {
                let entry = history.history().recall(EntryId(first + k)).unwrap();
                assert!(
                    entry.message().text() == batch_text(first, k),
                    "round {round}: acknowledged batch #{first} lost entry {k}"
                );
            }
        }
        acknowledged.extend(acked_this_round);
        batches_acked.extend(batches_this_round);
        // The view rebuilds the same through the reader that holds every original.
        let (all, _) = History::from_journal(std::fs::File::open(&path).unwrap()).unwrap();
        // Every batch in the file is whole, acknowledged or not.
        for (first, n) in batches(&all) {
            assert_eq!(n, BATCH, "round {round}: batch #{first} is half there");
        }
        assert_eq!(all.view(), history.history().view(), "round {round}");
        assert_eq!(all.usage_tokens(), history.history().usage_tokens());
        // Memory bounded by the view: only view items and pinned entries are held.
        assert_eq!(
            history.history().entries().len(),
            history.history().view().len() + history.history().pinned().len()
        );
        drop(history);
    }

    // Everything acknowledged over all rounds, and the view rebuilds the same two ways.
    let history = JournaledHistory::open(&path).unwrap();
    assert!(history.report().is_clean());
    for &id in &acknowledged {
        let entry = history.history().recall(EntryId(id)).unwrap();
        assert!(entry.message().text() == message_text(id), "#{id} differs");
    }
    let full = history.history().full_copy().unwrap();
    assert_eq!(full.entries().len(), history.history().len());
    let replayed = History::from_json(&full.to_json()).unwrap();
    assert_eq!(replayed.view(), history.history().view());
    assert_eq!(replayed.usage_tokens(), history.history().usage_tokens());
    assert!(matches!(
        OpenOptions::new().keep_originals(true).open(&path),
        Err(JournalError::Locked { .. })
    ));
    drop(history);
    let kept = OpenOptions::new().keep_originals(true).open(&path).unwrap();
    assert_eq!(kept.history().entries(), full.entries());
    assert_eq!(kept.history().view(), full.view());

    eprintln!(
        "kill test: {ROUNDS} rounds, {} appends, {} batches and {compactions_acked} compactions ({engine_acked} by the engine) acknowledged, {torn_tails} torn tails cut, {} entries, {:?}",
        acknowledged.len(),
        batches_acked.len(),
        full.len(),
        started.elapsed()
    );
    assert!(!acknowledged.is_empty(), "the writer never got to append");
    assert!(compactions_acked > 0, "the writer never got to compact");
    assert!(engine_acked > 0, "the compaction engine never compacted");
    assert!(
        !batches_acked.is_empty(),
        "the writer never got to record a batch"
    );
}
