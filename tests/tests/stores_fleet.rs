//! The fleet test: worker processes (`store_fleet_worker`) drive sessions on one
//! PostgreSQL server (appends, compactions, recalls); each round one is killed with
//! SIGKILL at a random moment and a new one started, and the survivors and newcomers take
//! its sessions over once its lease runs out. Then: every acknowledged entry is present
//! and intact, no session ever had two writers (claim epochs unique and increasing, no row
//! written under a stale epoch), and each reopened view equals a replay of the whole
//! session from its exported journal.
#![cfg(feature = "postgres")]

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use favur_context::EntryId;
use favur_context::journal::OpenOptions;
use favur_context::store::{PgStore, SessionOptions};
use favur_context_tests::pg::with_server;

const WORKERS: usize = 3;
const SESSIONS: usize = 8;
const ROUNDS: usize = 6;
const LEASE_MS: u64 = 400;

/// What the workers reported: acknowledged ids and claim epochs, by session.
#[derive(Default)]
struct Reports {
    acked: BTreeMap<String, BTreeSet<u64>>,
    epochs: BTreeMap<String, Vec<u64>>,
}

/// A tiny deterministic generator (xorshift), seeded from the clock and printed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

fn spawn(
    config: &str,
    stop: &std::path::Path,
    sessions: &[String],
    reports: &Arc<Mutex<Reports>>,
) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_store_fleet_worker"))
        .arg(config)
        .arg(stop)
        .arg(LEASE_MS.to_string())
        .arg("3")
        .args(sessions)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the worker starts");
    let stdout = child.stdout.take().expect("piped");
    let reports = Arc::clone(reports);
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let parts: Vec<&str> = line.split(' ').collect();
            let mut r = reports.lock().unwrap();
            match parts.as_slice() {
                ["A", s, id] => {
                    r.acked
                        .entry((*s).to_owned())
                        .or_default()
                        .insert(id.parse().unwrap());
                }
                ["E", s, epoch] => r
                    .epochs
                    .entry((*s).to_owned())
                    .or_default()
                    .push(epoch.parse().unwrap()),
                _ => {}
            }
        }
    });
    child
}

#[test]
fn a_fleet_with_killed_workers_loses_nothing_and_never_has_two_writers() {
    with_server("store fleet", |server| {
        let config = server.config();
        let dir = tempfile::tempdir().unwrap();
        let stop = dir.path().join("stop");
        let sessions: Vec<String> = (0..SESSIONS).map(|i| format!("fleet-{i}")).collect();
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            | 1;
        println!("fleet seed {seed}");
        let mut rng = Rng(seed);
        let reports = Arc::new(Mutex::new(Reports::default()));
        let mut workers: Vec<Child> = (0..WORKERS)
            .map(|_| spawn(&config, &stop, &sessions, &reports))
            .collect();
        let mut kills = 0;
        for _round in 0..ROUNDS {
            std::thread::sleep(Duration::from_millis(300 + rng.below(900)));
            let victim = rng.below(workers.len() as u64) as usize;
            workers[victim].kill().unwrap(); // SIGKILL
            workers[victim].wait().unwrap();
            kills += 1;
            workers[victim] = spawn(&config, &stop, &sessions, &reports);
        }
        // Let the last takeovers happen, then stop everyone.
        std::thread::sleep(Duration::from_millis(LEASE_MS * 3));
        std::fs::write(&stop, b"").unwrap();
        for mut w in workers {
            let status = w.wait().unwrap();
            assert!(status.success(), "a worker failed: {status}");
        }

        let reports = reports.lock().unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (mut acked, mut lost, mut double) = (0usize, 0usize, 0usize);
        runtime.block_on(async {
            for s in &sessions {
                let store = PgStore::open_with(&config, s, &SessionOptions::new()).await.unwrap();
                let h = store.history();
                for &id in reports.acked.get(s).into_iter().flatten() {
                    acked += 2;
                    let call = h.recall(EntryId(id)).is_ok_and(|e| {
                        e.message().tool_calls().next().is_some_and(|c| c.id == format!("c{id}"))
                    });
                    let result = h.recall(EntryId(id + 1)).is_ok_and(|e| {
                        e.message().tool_results().next().is_some_and(|r| {
                            r.call_id == format!("c{id}") && r.content.starts_with(&format!("{s}#{} ", id + 1))
                        })
                    });
                    if !(call && result) {
                        lost += 1;
                        eprintln!("{s}: acknowledged batch at {id} missing or changed");
                    }
                }
                // Epochs are unique per session (two claims never share one).
                let epochs = reports.epochs.get(s).cloned().unwrap_or_default();
                let unique: BTreeSet<u64> = epochs.iter().copied().collect();
                double += epochs.len() - unique.len();
                // The reopened view equals a replay of every record, from the journal.
                let mut journal = Vec::new();
                store.export_journal(&mut journal).await.unwrap();
                let (replayed, _) = OpenOptions::new().read(&journal[..]).unwrap();
                assert_eq!(h.view(), replayed.view(), "{s}: view");
                assert_eq!(h.next_id(), replayed.next_id(), "{s}: ids");
                store.close().await.unwrap();
            }
            // No row was written under a stale epoch: along each session, epochs never go back.
            let (c, connection) = tokio_postgres::connect(&config, tokio_postgres::NoTls).await.unwrap();
            tokio::spawn(connection);
            let stale: i64 = c
                .query_one(
                    "SELECT count(*) FROM (SELECT epoch < max(epoch) OVER (PARTITION BY session ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS stale FROM favur_records) t WHERE stale",
                    &[],
                )
                .await
                .unwrap()
                .get(0);
            double += stale as usize;
            let compactions: i64 = c
                .query_one("SELECT count(*) FROM favur_records WHERE body LIKE '{\"compaction\"%'", &[])
                .await
                .unwrap()
                .get(0);
            let claims: usize = reports.epochs.values().map(Vec::len).sum();
            println!(
                "fleet: {ROUNDS} rounds, {kills} kills, {WORKERS} workers, {SESSIONS} sessions, {claims} claims, {acked} acknowledged entries, {compactions} compactions, lost {lost}, double writers {double}"
            );
            assert!(claims > SESSIONS, "sessions were taken over ({claims} claims)");
            assert!(compactions > 0, "the workers compacted");
        });
        assert!(acked > 0);
        assert_eq!(lost, 0, "lost acknowledged entries");
        assert_eq!(double, 0, "double writers");
    });
}
