//! The PostgreSQL postmaster killed (SIGKILL) while a write's `COMMIT` is in flight, in a
//! loop: every such write is `StoreError::Uncertain`, and a retry through the write's
//! idempotency key after the restart writes it exactly once, whether the commit had landed
//! or not. Both outcomes are made to happen, not hoped for:
//!
//! - **landed**: the server is told to wait for a synchronous standby that never comes
//!   (`synchronous_standby_names`), so `COMMIT` has written its commit record and waits to
//!   acknowledge it when the postmaster dies; crash recovery then replays it;
//! - **not landed**: a deferred trigger sleeps inside `COMMIT` before the commit record,
//!   and the backend exits when the postmaster dies.

use std::time::Duration;

use favur_context::store::{PgStore, SessionOptions, StoreError};
use favur_context::{AsyncStore, fuzzy};
use favur_context_tests::pg::Server;

use super::postgres::{client, with_pg};

const ROUNDS: usize = 10;

/// How a round's commit is held when the postmaster dies.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Hold {
    /// After the commit record, waiting for a standby: the write lands.
    AfterCommitRecord,
    /// Inside a deferred trigger, before the commit record: the write does not land.
    BeforeCommitRecord,
}

/// Makes the next `COMMIT` that writes a record be held as `hold` says.
async fn hold_commits(server: &Server, hold: Hold) {
    let admin = client(server).await;
    match hold {
        Hold::AfterCommitRecord => {
            server
                .auto_conf("synchronous_standby_names", Some("nobody"))
                .unwrap();
            admin
                .batch_execute("SELECT pg_reload_conf()")
                .await
                .unwrap();
            // The reload reaches the checkpointer, which tells the backends.
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        Hold::BeforeCommitRecord => admin
            .batch_execute("ALTER TABLE favur_records ENABLE TRIGGER favur_slow")
            .await
            .unwrap(),
    }
}

/// Restarts the killed server with commits no longer held.
async fn restart_unheld(server: &mut Server, hold: Hold) {
    if hold == Hold::AfterCommitRecord {
        server.auto_conf("synchronous_standby_names", None).unwrap();
    }
    server.resume_after_crash().unwrap();
    if hold == Hold::BeforeCommitRecord {
        client(server)
            .await
            .batch_execute("ALTER TABLE favur_records DISABLE TRIGGER favur_slow")
            .await
            .unwrap();
    }
}

/// Installs the (disabled) deferred trigger that holds a commit inside `COMMIT`.
async fn install_trigger(server: &Server) {
    client(server)
        .await
        .batch_execute(
            "CREATE FUNCTION favur_slow_commit() RETURNS trigger LANGUAGE plpgsql AS
               $$ BEGIN PERFORM pg_sleep(30); RETURN NULL; END $$;
             CREATE CONSTRAINT TRIGGER favur_slow AFTER INSERT ON favur_records
               DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION favur_slow_commit();
             ALTER TABLE favur_records DISABLE TRIGGER favur_slow;",
        )
        .await
        .unwrap();
}

#[test]
fn postmaster_kills_at_commit_time_retried_through_the_key_lose_nothing_and_duplicate_nothing() {
    with_pg("postgres commit-time kills", async |server, config| {
        let options = SessionOptions::new().owner("worker-k");
        let mut store = PgStore::open_with(config, "k", &options).await.unwrap();
        store.append(fuzzy!(user: "task")).await.unwrap();
        store.close().await.unwrap();
        install_trigger(server).await;
        let mut acked = vec!["task".to_owned()];
        let (mut landed, mut not_landed) = (0, 0);
        for round in 0..ROUNDS {
            let hold = if round % 2 == 0 {
                Hold::AfterCommitRecord
            } else {
                Hold::BeforeCommitRecord
            };
            let mut store = PgStore::open_with(config, "k", &options).await.unwrap();
            assert_eq!(
                crate::common::texts(store.history()),
                acked,
                "round {round}"
            );
            store.append(fuzzy!(user: "ask {round}")).await.unwrap();
            acked.push(format!("ask {round}"));
            hold_commits(server, hold).await;

            let key = format!("reply-{round}");
            let write = store.append_once(&key, fuzzy!(assistant: "reply {round}"));
            let kill = async {
                tokio::time::sleep(Duration::from_millis(700)).await;
                server.kill_postmaster().unwrap();
            };
            let (err, ()) = tokio::join!(write, kill);
            let err = err.unwrap_err();
            assert!(
                matches!(err, StoreError::Uncertain { .. }),
                "round {round} ({hold:?}): {err}"
            );
            drop(store);
            restart_unheld(server, hold).await;

            // Reopened by the same owner; looked at; retried through the key.
            let mut store = PgStore::open_with(config, "k", &options).await.unwrap();
            let was_there = store.history().recorded_with_key(&key).is_some();
            match hold {
                Hold::AfterCommitRecord => assert!(was_there, "round {round}: not landed"),
                Hold::BeforeCommitRecord => assert!(!was_there, "round {round}: landed"),
            }
            if was_there {
                landed += 1;
            } else {
                not_landed += 1;
            }
            let len = store.history().len();
            let first = store
                .append_once(&key, fuzzy!(assistant: "reply {round}"))
                .await
                .unwrap();
            // A retry of a landed write writes nothing; one that did not land, once.
            assert_eq!(store.history().len(), len + usize::from(!was_there));
            assert_eq!(
                store
                    .append_once(&key, fuzzy!(assistant: "again"))
                    .await
                    .unwrap(),
                first
            );
            acked.push(format!("reply {round}"));
            store.close().await.unwrap();
        }
        let store = PgStore::open_with(config, "k", &options).await.unwrap();
        let texts = crate::common::texts(store.history());
        store.close().await.unwrap();
        let duplicated = texts.len().saturating_sub(acked.len());
        let lost = acked.iter().filter(|t| !texts.contains(t)).count();
        eprintln!(
            "commit-time kills: {ROUNDS} postmaster SIGKILLs, {landed} writes had landed, {not_landed} had not, {} acknowledged entries, lost {lost}, duplicated {duplicated}",
            acked.len()
        );
        assert_eq!(texts, acked, "every write exactly once, in order");
        assert!(landed >= 1 && not_landed >= 1);
    });
}
