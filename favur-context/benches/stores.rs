//! Store benchmarks (a plain binary, not timed tests): appends per second for the
//! journal, SQLite and PostgreSQL at 1, 8 and 32 concurrent sessions, each with its
//! strongest durability (journal `SyncEach`: fdatasync per append; SQLite WAL with
//! `synchronous=FULL`; PostgreSQL commit with `fsync=on`); reopening a 100k-entry
//! session; recall latency of evicted originals. PostgreSQL is a throwaway cluster (see
//! `tests/src/pg.rs`).
//!
//! `cargo bench -p favur-context --features sqlite,postgres --bench stores`; with
//! `-- --seal`, only the cost of sealing (appends and reopening, with and without a
//! [`SealKey`]), on the journal and SQLite.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use favur_context::compact::{Compaction, Edit};
use favur_context::journal::{Durability, JournaledHistory, OpenOptions};
use favur_context::store::{PgStore, SealKey, SessionOptions, SqliteStore};
use favur_context::{AsyncStore as _, EntryId, History, Store, fuzzy};

#[path = "../../tests/src/pg.rs"]
#[allow(dead_code)]
mod pg;

/// A typical short message (~100 bytes of text).
const TEXT: &str = "Ran `cargo test -p parser`: 41 passed, 1 failed (parse::tests::nested_lists); see the trace above.";

/// Appends per session at each concurrency.
fn per_session(sessions: usize) -> usize {
    match sessions {
        1 => 400,
        8 => 100,
        _ => 40,
    }
}

/// Runs `sessions` threads, each doing `f(i)` after a common start; appends per second.
fn threads(sessions: usize, f: impl Fn(usize) + Send + Sync + 'static) -> f64 {
    let f = Arc::new(f);
    let start = Arc::new(Barrier::new(sessions + 1));
    let handles: Vec<_> = (0..sessions)
        .map(|i| {
            let (f, start) = (Arc::clone(&f), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                f(i);
            })
        })
        .collect();
    start.wait();
    let t = Instant::now();
    for h in handles {
        h.join().expect("a bench thread");
    }
    (sessions * per_session(sessions)) as f64 / t.elapsed().as_secs_f64()
}

/// Appends per second on `stores`, one thread per store.
fn sync_appends<S: Store + Send + 'static>(stores: Vec<S>) -> f64 {
    let sessions = stores.len();
    let stores: Arc<Vec<_>> = Arc::new(stores.into_iter().map(std::sync::Mutex::new).collect());
    threads(sessions, move |i| {
        let mut s = stores[i].lock().expect("one user");
        for _ in 0..per_session(sessions) {
            Store::append(&mut *s, fuzzy!(user: "{TEXT}")).expect("append");
        }
    })
}

fn journal_appends(dir: &std::path::Path, sessions: usize) -> f64 {
    let options = OpenOptions::new().durability(Durability::SyncEach);
    let open = |i| {
        options
            .open(dir.join(format!("j{sessions}-{i}.jsonl")))
            .expect("open")
    };
    sync_appends((0..sessions).map(open).collect())
}

fn sqlite_appends(path: &std::path::Path, sessions: usize) -> f64 {
    let open = |i| SqliteStore::open(path, &format!("c{sessions}-{i}")).expect("open");
    sync_appends((0..sessions).map(open).collect())
}

fn pg_appends(rt: &tokio::runtime::Runtime, config: &str, sessions: usize) -> f64 {
    rt.block_on(async {
        let mut stores = Vec::new();
        for i in 0..sessions {
            stores.push(
                PgStore::open(config, &format!("c{sessions}-{i}"))
                    .await
                    .expect("open"),
            );
        }
        let t = Instant::now();
        let tasks: Vec<_> = stores
            .into_iter()
            .map(|mut s| {
                tokio::spawn(async move {
                    for _ in 0..per_session(sessions) {
                        s.append(fuzzy!(user: "{TEXT}")).await.expect("append");
                    }
                    s.close().await.expect("close");
                })
            })
            .collect();
        for t in tasks {
            t.await.expect("a bench task");
        }
        (sessions * per_session(sessions)) as f64 / t.elapsed().as_secs_f64()
    })
}

/// A journal of `n` entries, most of them dropped by one compaction at the end (so their
/// originals are evicted and recalled from storage).
fn big_journal(n: u64) -> Vec<u8> {
    let mut h = History::new();
    for i in 0..n {
        h.append(fuzzy!(user: "{i}: {TEXT}"));
    }
    let edits = (0..n - 100)
        .map(|i| Edit::Drop { id: EntryId(i) })
        .collect();
    h.apply(Compaction {
        tier: std::num::NonZeroU8::new(2).expect("2 is not 0"),
        edits,
        usage_after: None,
    })
    .expect("applies");
    let mut out = Vec::new();
    favur_context::journal::export_journal(&h, &mut out).expect("export");
    out
}

/// Microseconds per recall over `ids`: the median and the 99th percentile.
fn recalls(h: &History, ids: &[EntryId]) -> (f64, f64) {
    let mut times: Vec<f64> = ids
        .iter()
        .map(|&id| {
            let t = Instant::now();
            let e = h.recall(id).expect("recall");
            assert!(e.message().text().starts_with(&format!("{}:", id.0)));
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], times[times.len() * 99 / 100])
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed())
}

/// Microseconds per append of `n` appends on `store`.
fn per_append<S: Store>(mut store: S, n: usize) -> f64 {
    let t = Instant::now();
    for _ in 0..n {
        Store::append(&mut store, fuzzy!(user: "{TEXT}")).expect("append");
    }
    t.elapsed().as_secs_f64() * 1e6 / n as f64
}

/// The cost of sealing (`--seal`): one session's appends with and without a key, the
/// journal (Flush and SyncEach) and SQLite, then reopening 20k entries.
fn seal_costs(dir: &std::path::Path) {
    let key = || SealKey::new([7u8; 32]).expect("a key");
    let journal = |d: Durability, sealed: bool| {
        let mut o = OpenOptions::new().durability(d);
        if sealed {
            o = o.seal_key(key());
        }
        o
    };
    let session = |sealed: bool| match sealed {
        true => SessionOptions::new().seal_key(key()),
        false => SessionOptions::new(),
    };
    println!("| one session, per append | unsealed | sealed (HMAC-SHA-256 chain) |");
    println!("|---|---:|---:|");
    for (name, d, n) in [
        ("journal, Flush", Durability::Flush, 20_000),
        ("journal, SyncEach", Durability::SyncEach, 400),
    ] {
        let mut row = Vec::new();
        for sealed in [false, true] {
            let path = dir.join(format!("seal-{n}-{sealed}.jsonl"));
            row.push(per_append(journal(d, sealed).open(&path).expect("open"), n));
        }
        println!("| {name} | {:.2} µs | {:.2} µs |", row[0], row[1]);
    }
    let mut row = Vec::new();
    for sealed in [false, true] {
        let path = dir.join("seal.sqlite");
        let store = SqliteStore::open_with(&path, &format!("s-{sealed}"), &session(sealed));
        row.push(per_append(store.expect("open"), 400));
    }
    println!(
        "| SQLite (synchronous=FULL) | {:.0} µs | {:.0} µs |",
        row[0], row[1]
    );
    let n = 20_000;
    let mut times = Vec::new();
    for sealed in [false, true] {
        let jpath = dir.join(format!("seal-reopen-{sealed}.jsonl"));
        let mut j = journal(Durability::Flush, sealed)
            .open(&jpath)
            .expect("open");
        let spath = dir.join("seal-reopen.sqlite");
        let name = format!("r-{sealed}");
        let mut s = SqliteStore::open_with(&spath, &name, &session(sealed)).expect("open");
        for _ in 0..n {
            Store::append(&mut j, fuzzy!(user: "{TEXT}")).expect("append");
        }
        let batch: Vec<_> = (0..n)
            .map(|_| favur_context::store::NewEntry::appended(fuzzy!(user: "{TEXT}")))
            .collect();
        for chunk in batch.chunks(1000) {
            Store::record(&mut s, chunk.to_vec()).expect("record");
        }
        drop((j, s));
        let (_, jt) = timed(|| {
            journal(Durability::Flush, sealed)
                .open(&jpath)
                .expect("open")
        });
        let (_, st) =
            timed(|| SqliteStore::open_with(&spath, &name, &session(sealed)).expect("open"));
        times.push((jt, st));
    }
    println!();
    println!("| reopen {n} entries | unsealed | sealed |");
    println!("|---|---:|---:|");
    for (name, pick) in [("journal (20k lines)", 0), ("SQLite (20 rows of 1000)", 1)] {
        let ms = |t: (Duration, Duration)| if pick == 0 { t.0 } else { t.1 }.as_secs_f64() * 1e3;
        println!(
            "| {name} | {:.1} ms | {:.1} ms |",
            ms(times[0]),
            ms(times[1])
        );
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` lists benchmarks: none of libtest's kind here
    }
    let dir = tempfile::tempdir().expect("temp dir");
    if std::env::args().any(|a| a == "--seal") {
        seal_costs(dir.path());
        return;
    }
    let server = pg::Server::start(true).expect("a PostgreSQL server");
    let config = server.config();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");

    println!(
        "| sessions | journal (SyncEach, fdatasync) | SQLite (WAL, synchronous=FULL) | PostgreSQL (commit, fsync=on) |"
    );
    println!("|---:|---:|---:|---:|");
    for sessions in [1, 8, 32] {
        let j = journal_appends(dir.path(), sessions);
        let s = sqlite_appends(&dir.path().join("appends.sqlite"), sessions);
        let p = pg_appends(&rt, &config, sessions);
        println!("| {sessions} | {j:.0} appends/s | {s:.0} appends/s | {p:.0} appends/s |");
    }

    let n = 100_000;
    let journal = big_journal(n);
    let jpath = dir.path().join("big.jsonl");
    std::fs::write(&jpath, &journal).expect("write");
    let spath = dir.path().join("big.sqlite");
    drop(
        SqliteStore::import_journal(&spath, "big", &journal[..], &SessionOptions::new())
            .expect("import"),
    );
    rt.block_on(async {
        PgStore::import_journal(&config, "big", &journal[..], &SessionOptions::new())
            .await
            .expect("import")
            .close()
            .await
            .expect("close");
    });
    let (j, jt) = timed(|| JournaledHistory::open(&jpath).expect("open"));
    let (s, st) = timed(|| SqliteStore::open(&spath, "big").expect("open"));
    let (p, pt) = timed(|| rt.block_on(PgStore::open(&config, "big")).expect("open"));
    assert_eq!(j.history().view(), s.history().view());
    assert_eq!(j.history().view(), p.history().view());
    println!();
    println!("| reopen {n} entries | journal | SQLite | PostgreSQL |");
    println!("|---|---:|---:|---:|");
    println!(
        "| time | {:.0} ms | {:.0} ms | {:.0} ms |",
        jt.as_secs_f64() * 1e3,
        st.as_secs_f64() * 1e3,
        pt.as_secs_f64() * 1e3
    );

    let ids: Vec<EntryId> = (0..2_000u64)
        .map(|i| EntryId((i * 7919) % (n - 100)))
        .collect();
    let (jm, j99) = recalls(j.history(), &ids);
    let (sm, s99) = recalls(s.history(), &ids);
    let (pm, p99) = recalls(p.history(), &ids);
    println!();
    println!("| recall of an evicted original | journal | SQLite | PostgreSQL |");
    println!("|---|---:|---:|---:|");
    println!("| median | {jm:.0} µs | {sm:.0} µs | {pm:.0} µs |");
    println!("| p99 | {j99:.0} µs | {s99:.0} µs | {p99:.0} µs |");
    rt.block_on(p.close()).expect("close");
}
