//! The PostgreSQL store against a throwaway server: the same agent code and history as
//! the other stores, one writer per session, damaged rows, interchange, and faults (a
//! server restart, a dropped connection, a statement timeout).

use std::time::Duration;

use favur_context::journal::{JournaledHistory, OpenOptions};
use favur_context::store::{PgStore, SessionOptions, StoreError};
use favur_context::{AsyncStore, History, fuzzy};
use favur_context_tests::pg::{Server, with_server};
use tokio_postgres::{Client, NoTls};

use super::agent::{agent_loop, assert_refused, assert_same, block_on, damages, three_rows};

/// A plain client of the server, for what the tests do behind the store's back.
pub(super) async fn client(server: &Server) -> Client {
    let (client, connection) = tokio_postgres::connect(&server.config(), NoTls)
        .await
        .expect("a connection");
    tokio::spawn(connection);
    client
}

/// Runs `test` in a runtime against a new server (see [`with_server`]), with the server's
/// config.
pub(super) fn with_pg(name: &str, test: impl AsyncFnOnce(&mut Server, &str)) {
    with_server(name, |server| {
        let config = server.config();
        block_on(test(server, &config));
    });
}

/// The texts of the session's entries, reopened.
async fn reopened_texts(config: &str, session: &str) -> Vec<String> {
    let options = SessionOptions::new().history(OpenOptions::new().keep_originals(true));
    let store = PgStore::open_with(config, session, &options).await.unwrap();
    let texts = crate::common::texts(store.history());
    store.close().await.unwrap();
    texts
}

#[test]
fn the_same_agent_code_gives_the_same_history_on_postgres() {
    with_pg("postgres agent loop", async |_server, config| {
        let dir = tempfile::tempdir().unwrap();
        let mut memory = History::new();
        agent_loop(&mut memory, 0, 12).await.unwrap();
        let mut journal = JournaledHistory::open(dir.path().join("a.jsonl")).unwrap();
        agent_loop(&mut journal, 0, 12).await.unwrap();
        let mut pg = PgStore::open(config, "agent").await.unwrap();
        agent_loop(&mut pg, 0, 12).await.unwrap();
        // Recall of evicted originals reads the database, from inside the runtime.
        assert!(pg.history().entries().len() < pg.history().len());
        assert_same(pg.history(), &memory, "postgres");
        assert_same(pg.history(), journal.history(), "postgres and journal");
        pg.close().await.unwrap();

        let mut pg = PgStore::open(config, "agent").await.unwrap();
        assert_same(pg.history(), &memory, "reopened");
        agent_loop(&mut memory, 12, 3).await.unwrap();
        agent_loop(&mut pg, 12, 3).await.unwrap();
        assert_same(pg.history(), &memory, "resumed");

        // Interchange: out as a journal, in as another session, the same history.
        let path = dir.path().join("exported.jsonl");
        pg.export_journal(std::fs::File::create(&path).unwrap())
            .await
            .unwrap();
        assert_same(
            JournaledHistory::open(&path).unwrap().history(),
            &memory,
            "exported",
        );
        let file = std::fs::File::open(&path).unwrap();
        let back = PgStore::import_journal(config, "imported", file, &SessionOptions::new())
            .await
            .unwrap();
        assert_same(back.history(), &memory, "imported");
        pg.close().await.unwrap();
        back.close().await.unwrap();
    });
}

#[test]
fn one_writer_per_session_and_a_writer_taken_over_never_writes_again() {
    with_pg("postgres claims", async |server, config| {
        let mut first = PgStore::open(config, "s").await.unwrap();
        first.append(fuzzy!(user: "one")).await.unwrap();
        let err = PgStore::open(config, "s").await.unwrap_err();
        assert!(
            matches!(&err, StoreError::Claimed { session, owner, .. } if session == "s" && owner == first.claim().owner()),
            "{err}"
        );
        // Another session on the same server is free.
        PgStore::open(config, "t")
            .await
            .unwrap()
            .close()
            .await
            .unwrap();
        first.close().await.unwrap();

        let expired = SessionOptions::new().lease(Duration::ZERO);
        let mut old = PgStore::open_with(config, "s", &expired).await.unwrap();
        old.append(fuzzy!(user: "two")).await.unwrap();
        let mut new = PgStore::open(config, "s").await.unwrap();
        assert_eq!((old.claim().epoch(), new.claim().epoch()), (2, 3));
        for attempt in ["three", "four"] {
            let err = old.append(fuzzy!(user: "{attempt}")).await.unwrap_err();
            assert!(matches!(err, StoreError::Fenced { epoch: 2, .. }), "{err}");
        }
        assert!(old.claim().is_fenced());
        new.append(fuzzy!(user: "five")).await.unwrap();
        new.close().await.unwrap();
        assert_eq!(reopened_texts(config, "s").await, ["one", "two", "five"]);
        let c = client(server).await;
        let stale: i64 = c
            .query_one(
                "SELECT count(*) FROM favur_records r JOIN favur_sessions s USING (session) WHERE r.epoch > s.epoch",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(stale, 0);
    });
}

#[test]
fn bad_rows_and_a_newer_schema_are_typed_errors() {
    with_pg("postgres bad rows", async |server, config| {
        let c = client(server).await;
        for (i, (sql, expected)) in damages().into_iter().enumerate() {
            let session = format!("job-{i}");
            let mut s = PgStore::open(config, &session).await.unwrap();
            three_rows(&mut s).await;
            s.close().await.unwrap();
            let sql = sql.replace("$S", &session);
            c.batch_execute(&sql).await.unwrap();
            let err = PgStore::open(config, &session).await.unwrap_err();
            assert_refused(&session, &sql, expected, &err);
            // Nothing was loaded, and the claim was given back: the same error again.
            let again = PgStore::open(config, &session).await.unwrap_err();
            assert_refused(&session, &sql, expected, &again);
        }
    });
}

#[test]
fn a_server_restart_mid_run_loses_nothing_acknowledged() {
    with_pg("postgres restart", async |server, config| {
        let options = SessionOptions::new().owner("worker-a");
        let mut store = PgStore::open_with(config, "r", &options).await.unwrap();
        let mut acked = Vec::new();
        for i in 0..5 {
            store.append(fuzzy!(user: "m{i}")).await.unwrap();
            acked.push(format!("m{i}"));
        }
        server.stop().unwrap();
        let err = store.append(fuzzy!(user: "lost")).await.unwrap_err();
        assert!(
            matches!(err, StoreError::Database { ref session, .. } if session == "r"),
            "{err}"
        );
        let err = PgStore::open_with(config, "r", &options).await.unwrap_err();
        assert!(matches!(err, StoreError::Database { .. }), "{err}");
        server.resume().unwrap();
        // The old connection is gone: still a typed error, never a panic.
        assert!(store.append(fuzzy!(user: "lost too")).await.is_err());
        // Reopened by the same owner: the claim is taken back at once, all there.
        let mut store = PgStore::open_with(config, "r", &options).await.unwrap();
        store.append(fuzzy!(user: "after")).await.unwrap();
        acked.push("after".into());
        store.close().await.unwrap();
        assert_eq!(reopened_texts(config, "r").await, acked);
    });
}

#[test]
fn a_dropped_connection_and_a_statement_timeout_are_typed_errors_then_recovered() {
    with_pg("postgres connection faults", async |server, config| {
        let options = SessionOptions::new()
            .owner("worker-b")
            .statement_timeout(Duration::from_millis(300));
        let c = client(server).await;
        let mut store = PgStore::open_with(config, "f", &options).await.unwrap();
        store.append(fuzzy!(user: "m0")).await.unwrap();

        // A statement timeout: another session holds the claim row's lock.
        c.batch_execute("BEGIN; SELECT * FROM favur_sessions WHERE session = 'f' FOR UPDATE")
            .await
            .unwrap();
        let err = store.append(fuzzy!(user: "timed out")).await.unwrap_err();
        assert!(matches!(err, StoreError::Database { .. }), "{err}");
        assert!(err.to_string().contains("statement timeout"), "{err}");
        c.batch_execute("ROLLBACK").await.unwrap();
        // Nothing was written, and the store goes on.
        store.append(fuzzy!(user: "m1")).await.unwrap();

        // A dropped connection: the server terminates the store's backend.
        c.batch_execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'",
        )
        .await
        .unwrap();
        let err = store.append(fuzzy!(user: "dropped")).await.unwrap_err();
        assert!(matches!(err, StoreError::Database { .. }), "{err}");
        let mut store = PgStore::open_with(config, "f", &options).await.unwrap();
        store.append(fuzzy!(user: "m2")).await.unwrap();
        store.close().await.unwrap();
        assert_eq!(reopened_texts(config, "f").await, ["m0", "m1", "m2"]);
    });
}

#[test]
fn a_commit_lost_midway_says_the_write_may_have_landed() {
    with_pg("postgres commit outcome unknown", async |server, config| {
        let options = SessionOptions::new().owner("worker-u");
        let c = client(server).await;
        let mut store = PgStore::open_with(config, "u", &options).await.unwrap();
        store.append(fuzzy!(user: "m0")).await.unwrap();
        // A deferred trigger makes COMMIT itself take 3 s; the server drops the
        // store's connection 1 s into it.
        c.batch_execute(
            "CREATE FUNCTION favur_slow_commit() RETURNS trigger LANGUAGE plpgsql AS
               $$ BEGIN PERFORM pg_sleep(3); RETURN NULL; END $$;
             CREATE CONSTRAINT TRIGGER favur_slow AFTER INSERT ON favur_records
               DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION favur_slow_commit();",
        )
        .await
        .unwrap();
        let killer = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            c.batch_execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend' AND query LIKE 'COMMIT%'",
            )
            .await
            .unwrap();
            c
        });
        let err = store.append(fuzzy!(user: "in doubt")).await.unwrap_err();
        let c = killer.await.unwrap();
        assert!(matches!(err, StoreError::Uncertain { .. }), "{err:?}");
        assert!(err.to_string().contains("may have landed"), "{err}");
        assert!(err.to_string().contains("session `u`"), "{err}");
        // The store takes no more writes until it is reopened.
        let err = store.append(fuzzy!(user: "after")).await.unwrap_err();
        assert!(matches!(err, StoreError::Poisoned { .. }), "{err}");
        drop(store);
        c.batch_execute("DROP TRIGGER favur_slow ON favur_records")
            .await
            .unwrap();
        // Reopened by the same owner (no wait for its own lease) and looked at: here
        // the commit did not land.
        let reopen = options
            .clone()
            .history(OpenOptions::new().keep_originals(true));
        let store = PgStore::open_with(config, "u", &reopen).await.unwrap();
        assert_eq!(crate::common::texts(store.history()), ["m0"]);
        store.close().await.unwrap();
    });
}

/// Sends `signal` to process `pid` (`kill -STOP`, `kill -CONT`).
fn signal(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill {signal} {pid}");
}

#[test]
fn a_writer_frozen_mid_write_loses_its_session_within_its_lease() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    use std::time::Instant;

    const LEASE: Duration = Duration::from_millis(1000);
    with_server("postgres frozen writer", |server| {
        let config = server.config();
        let mut child = Command::new(env!("CARGO_BIN_EXE_frozen_writer"))
            .args([config.as_str(), "z", &LEASE.as_millis().to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the writer starts");
        let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
        assert_eq!(lines.next().unwrap().unwrap(), "ready");
        block_on(async {
            let c = client(server).await;
            // Its next insert takes half a second: it is stopped inside it, and its
            // transaction then stays open, holding the session's row lock.
            c.batch_execute(
                "CREATE FUNCTION favur_slow_insert() RETURNS trigger LANGUAGE plpgsql AS
                   $$ BEGIN IF NEW.body LIKE '%slow-me%' THEN PERFORM pg_sleep(0.5); END IF; RETURN NEW; END $$;
                 CREATE TRIGGER favur_slow BEFORE INSERT ON favur_records
                   FOR EACH ROW EXECUTE FUNCTION favur_slow_insert();",
            )
            .await
            .unwrap();
        });
        let mut stdin = child.stdin.take().expect("piped");
        writeln!(stdin, "go").unwrap();
        std::thread::sleep(Duration::from_millis(200));
        signal(child.id(), "-STOP");
        let frozen = Instant::now();

        // A new writer takes the session over: each open either fails with a typed error
        // within a bounded time (the lock it waits for, the lease still running) or
        // succeeds; none blocks for the freeze.
        let options = SessionOptions::new().owner("new").lease(LEASE);
        let took = block_on(async {
            let store = loop {
                let open = PgStore::open_with(&config, "z", &options);
                match tokio::time::timeout(Duration::from_secs(3), open).await {
                    Err(_) => panic!("an open blocked behind the frozen writer for 3 s"),
                    Ok(Ok(store)) => break store,
                    Ok(Err(e)) => {
                        assert!(
                            matches!(e, StoreError::Claimed { .. } | StoreError::Database { .. }),
                            "{e}"
                        );
                        assert!(
                            frozen.elapsed() < Duration::from_secs(5),
                            "still refused: {e}"
                        );
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            };
            let took = frozen.elapsed();
            assert_eq!(crate::common::texts(store.history()), ["m0"]);
            store.close().await.unwrap();
            took
        });
        assert!(
            took <= LEASE + Duration::from_secs(1),
            "taken over after {took:?}"
        );

        // Resumed, the frozen writer's write never lands.
        signal(child.id(), "-CONT");
        let said = lines.next().unwrap().unwrap();
        assert!(said.starts_with("error"), "the frozen writer said {said:?}");
        child.wait().unwrap();
        assert_eq!(block_on(reopened_texts(&config, "z")), ["m0"]);
        eprintln!(
            "taken over {took:?} after the freeze (lease {LEASE:?}); the frozen writer said: {said}"
        );
    });
}

#[test]
fn open_or_create_sets_a_session_up_once_and_a_restart_finds_it() {
    use favur_context::store::NewEntry;
    use favur_context::strict;
    with_server("postgres open_or_create", |server| {
        let config = server.config();
        let options = SessionOptions::new().owner("worker-s");
        let setup = || {
            vec![
                NewEntry::pinned(strict!(system: "You are a coding agent.")),
                NewEntry::appended(strict!(user: "Make the tests pass.")),
            ]
        };
        block_on(async {
            let mut first = PgStore::open_or_create(&config, "job", &options, setup)
                .await
                .unwrap();
            assert!(first.created());
            first.append(fuzzy!(assistant: "working")).await.unwrap();
            drop(first); // killed: the same owner takes its claim back at once
            let again = PgStore::open_or_create(&config, "job", &options, || {
                panic!("setup runs only for a new session")
            })
            .await
            .unwrap();
            assert!(!again.created());
            assert_eq!(again.history().pinned().len(), 1, "one system prompt");
            assert_eq!(
                crate::common::texts(again.history()),
                ["You are a coding agent.", "Make the tests pass.", "working"]
            );
            again.close().await.unwrap();
        });
    });
}
