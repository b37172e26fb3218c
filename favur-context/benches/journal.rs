//! Journal benchmarks: journaled append throughput for each durability setting (and
//! sealed, with a [`SealKey`]), batches of 10, and reopening a journal of 100k entries.
//!
//! `cargo bench -p favur-context --bench journal`

use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use favur_context::compact::{Compaction, Edit};
use favur_context::journal::{Durability, JournaledHistory, OpenOptions};
use favur_context::message::{CallSite, EntryKind};
use favur_context::store::{NewEntry, SealKey};
use favur_context::{Entry, Message, Retention, Store};

/// A typical short message (~100 bytes of text).
const TEXT: &str = "Ran `cargo test -p parser`: 41 passed, 1 failed (parse::tests::nested_lists); see the trace above.";

fn append(c: &mut Criterion) {
    let mut group = c.benchmark_group("journal_append");
    group.throughput(Throughput::Elements(1));
    for (name, durability, time, sealed) in [
        ("flush", Durability::Flush, 3, false),
        ("flush_sealed", Durability::Flush, 3, true),
        ("sync_every_100", Durability::SyncEvery(100), 3, false),
        ("sync_each", Durability::SyncEach, 3, false),
        ("sync_each_sealed", Durability::SyncEach, 3, true),
    ] {
        group.measurement_time(Duration::from_secs(time));
        group.warm_up_time(Duration::from_millis(500));
        group.sample_size(if durability == Durability::SyncEach {
            10
        } else {
            30
        });
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("bench.jsonl");
        let mut options = OpenOptions::new().durability(durability);
        if sealed {
            options = options.seal_key(SealKey::new([7u8; 32]).expect("a key"));
        }
        let mut history = options.open(&path).expect("open");
        group.bench_function(name, |b| {
            b.iter(|| {
                history
                    .append(Message::user(TEXT).classify(Retention::Fuzzy))
                    .expect("append")
            })
        });
    }
    group.finish();
}

/// Batches of 10 entries recorded with `Store::record` (one line, one write each).
fn batch(c: &mut Criterion) {
    let mut group = c.benchmark_group("journal_batch");
    group.throughput(Throughput::Elements(10));
    group.measurement_time(Duration::from_secs(3));
    group.warm_up_time(Duration::from_millis(500));
    group.sample_size(30);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bench.jsonl");
    let mut history = OpenOptions::new().open(&path).expect("open");
    group.bench_function("flush_10", |b| {
        b.iter(|| {
            let batch = (0..10)
                .map(|_| NewEntry::appended(Message::user(TEXT).classify(Retention::Fuzzy)))
                .collect();
            history.record(batch).expect("record")
        })
    });
    group.finish();
}

/// Writes a journal of `n` appended entries. With `compact_every`, a compaction every that
/// many appends summarizes the oldest half of the view into one summary and drops the
/// next item, as a compaction engine keeping the view within a budget would; without,
/// every entry stays in the view (the most a reopen has to hold).
fn write_journal(path: &std::path::Path, n: usize, compact_every: Option<usize>) {
    let mut history = JournaledHistory::open(path).expect("open");
    let mut appended = 0;
    while appended < n {
        history
            .append(Message::user(TEXT).classify(Retention::Fuzzy))
            .expect("append");
        appended += 1;
        if let Some(every) = compact_every
            && appended.is_multiple_of(every)
        {
            let items: Vec<_> = history
                .history()
                .view()
                .items()
                .iter()
                .map(|i| i.id)
                .collect();
            let half = items.len() / 2;
            let summary = Entry::new(
                history.history().next_id(),
                Retention::Fuzzy,
                8,
                CallSite::new("bench", 1, 1),
                EntryKind::Summary {
                    replaces: items[..half].to_vec(),
                },
                Message::assistant("test runs so far: one failure in nested lists"),
            );
            history
                .apply(Compaction {
                    tier: std::num::NonZeroU8::new(2).expect("2 is not 0"),
                    edits: vec![
                        Edit::Summarize {
                            summary: summary.into(),
                        },
                        Edit::Drop { id: items[half] },
                    ],
                    usage_after: None,
                })
                .expect("compact");
        }
    }
}

fn reopen(c: &mut Criterion) {
    let mut group = c.benchmark_group("journal_reopen");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(6));
    group.throughput(Throughput::Elements(100_000));
    for (name, compact_every) in [
        ("100k_entries_view_bounded", Some(400)),
        ("100k_entries_all_in_view", None),
    ] {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("100k.jsonl");
        write_journal(&path, 100_000, compact_every);
        group.bench_function(name, |b| {
            b.iter_batched(
                || (),
                |()| {
                    let h = JournaledHistory::open(&path).expect("reopen");
                    assert!(h.history().len() >= 100_000);
                    h
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, append, batch, reopen);
criterion_main!(benches);
