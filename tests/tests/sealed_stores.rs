//! Sealed database sessions (issue 27 item 3), SQLite and PostgreSQL: with a key, every
//! edit of the rows made without it (an added row, a removed one, an edit of the same
//! length, a changed token count, a role changed to system, a changed framing, another
//! key, the MACs stripped) is refused on open naming the session and sequence, and on
//! read-back; untouched, the session opens to the view it wrote; export and import keep
//! the chain.
#![cfg(feature = "sqlite")]

use std::num::NonZeroU8;

use favur_context::compact::{Compaction, Edit};
use favur_context::journal::{JournalError, OpenOptions};
use favur_context::store::{SealKey, SessionOptions, SqliteStore, StoreError, Tamper};
use favur_context::{EntryId, History, Store, fuzzy, strict};
use rusqlite::Connection;

fn key(byte: u8) -> SealKey {
    SealKey::new([byte; 32]).unwrap()
}

fn sealed() -> SessionOptions {
    SessionOptions::new().seal_key(key(7))
}

/// What every store writes: a pinned system prompt (row 0), `user aaaa` (1), `user bbbb`
/// (2), `assistant cccc` (3), a compaction dropping `aaaa` (4), `user dddd` (5).
fn steps() -> Vec<Step> {
    vec![
        Step::Pin("You are careful."),
        Step::User("aaaa"),
        Step::User("bbbb"),
        Step::Assistant("cccc"),
        Step::DropFirst,
        Step::User("dddd"),
    ]
}

enum Step {
    Pin(&'static str),
    User(&'static str),
    Assistant(&'static str),
    DropFirst,
}

/// A new database with the sealed session `session`, [`run`] on it: the database's
/// folder (kept while it lives), its path, the store and the id of `user aaaa`.
fn sealed_run(session: &str) -> (tempfile::TempDir, std::path::PathBuf, SqliteStore, EntryId) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let mut store = SqliteStore::open_with(&path, session, &sealed()).unwrap();
    let first = run(&mut store);
    (dir, path, store, first)
}

fn run<S: Store>(store: &mut S) -> EntryId
where
    S::Error: std::fmt::Debug,
{
    let mut first = None;
    for step in steps() {
        match step {
            Step::Pin(t) => drop(store.pin(strict!(system: t)).unwrap()),
            Step::User(t) => {
                let id = store.append(fuzzy!(user: t)).unwrap();
                first.get_or_insert(id);
            }
            Step::Assistant(t) => drop(store.append(fuzzy!(assistant: t)).unwrap()),
            Step::DropFirst => store
                .apply(Compaction {
                    tier: NonZeroU8::new(2).unwrap(),
                    edits: vec![Edit::Drop { id: first.unwrap() }],
                    usage_after: None,
                })
                .unwrap(),
        }
    }
    first.unwrap()
}

/// An edit of session `{s}`'s rows, made behind the store's back, and where and how it is
/// refused.
struct Case {
    name: &'static str,
    sql: &'static [&'static str],
    seq: u64,
    problem: Tamper,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "an added row (a copy of a sealed one)",
            sql: &[
                "INSERT INTO favur_records (session, seq, first_id, ids, epoch, body, mac) SELECT session, 6, 5, ids, epoch, body, mac FROM favur_records WHERE session = '{s}' AND seq = 2",
            ],
            seq: 6,
            problem: Tamper::Mac,
        },
        Case {
            name: "an added hand-written row",
            sql: &[
                "INSERT INTO favur_records (session, seq, first_id, ids, epoch, body) SELECT session, 6, 5, ids, epoch, replace(body, '\"id\":0', '\"id\":5') FROM favur_records WHERE session = '{s}' AND seq = 0",
            ],
            seq: 6,
            problem: Tamper::Unmarked,
        },
        Case {
            name: "a removed middle row",
            sql: &["DELETE FROM favur_records WHERE session = '{s}' AND seq = 2"],
            seq: 2,
            problem: Tamper::Mac,
        },
        Case {
            name: "a same-length in-place edit",
            sql: &[
                "UPDATE favur_records SET body = replace(body, 'bbbb', 'bbbx') WHERE session = '{s}' AND seq = 2",
            ],
            seq: 2,
            problem: Tamper::Mac,
        },
        Case {
            name: "a changed token count",
            sql: &[
                "UPDATE favur_records SET body = replace(body, '\"tokens\":1', '\"tokens\":7') WHERE session = '{s}' AND seq = 3",
            ],
            seq: 3,
            problem: Tamper::Mac,
        },
        Case {
            name: "a role changed to system",
            sql: &[
                "UPDATE favur_records SET body = replace(body, '\"role\":\"user\"', '\"role\":\"system\"') WHERE session = '{s}' AND seq = 2",
            ],
            seq: 2,
            problem: Tamper::Mac,
        },
        Case {
            name: "a changed framing",
            sql: &["UPDATE favur_sessions SET framing_tokens = 9 WHERE session = '{s}'"],
            seq: 0,
            problem: Tamper::Mac,
        },
        Case {
            name: "the MACs stripped",
            sql: &["UPDATE favur_records SET mac = NULL WHERE session = '{s}'"],
            seq: 0,
            problem: Tamper::NotSealed,
        },
    ]
}

fn is_tampered(err: &StoreError, session: &str, seq: u64, problem: &Tamper) -> bool {
    matches!(err, StoreError::Tampered { session: s, seq: q, problem: p } if s == session && *q == seq && p == problem)
}

fn texts(h: &History) -> Vec<String> {
    h.full_copy()
        .unwrap()
        .entries()
        .iter()
        .map(|e| e.message().text())
        .collect()
}

#[test]
fn every_edit_of_a_sealed_sqlite_session_is_refused_with_its_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    for (i, case) in cases().into_iter().enumerate() {
        let session = format!("s{i}");
        let mut store = SqliteStore::open_with(&path, &session, &sealed()).unwrap();
        run(&mut store);
        let written = store.history().view().clone();
        assert_eq!(store.seal_head().unwrap().seq, 5);
        drop(store);
        // Untouched: opens to the view it wrote.
        let again = SqliteStore::open_with(&path, &session, &sealed()).unwrap();
        assert_eq!(again.history().view(), &written);
        drop(again);
        let conn = Connection::open(&path).unwrap();
        for sql in case.sql {
            let changed = conn.execute(&sql.replace("{s}", &session), []).unwrap();
            assert!(changed > 0, "{}: the edit changes rows", case.name);
        }
        drop(conn);
        let err = SqliteStore::open_with(&path, &session, &sealed()).unwrap_err();
        assert!(
            is_tampered(&err, &session, case.seq, &case.problem),
            "{}: {err}",
            case.name
        );
    }
}

#[test]
fn a_sealed_sqlite_session_needs_its_key_and_an_unsealed_one_refuses_a_key() {
    let (_dir, path, store, _) = sealed_run("k");
    drop(store);
    let other = SessionOptions::new().seal_key(key(8));
    let err = SqliteStore::open_with(&path, "k", &other).unwrap_err();
    assert!(is_tampered(&err, "k", 0, &Tamper::Mac), "{err}");
    let err = SqliteStore::open(&path, "k").unwrap_err();
    assert!(is_tampered(&err, "k", 0, &Tamper::KeyNeeded), "{err}");
    // An unsealed session: as before without a key, refused with one.
    let mut plain = SqliteStore::open(&path, "plain").unwrap();
    run(&mut plain);
    assert!(plain.seal_head().is_none());
    drop(plain);
    let err = SqliteStore::open_with(&path, "plain", &sealed()).unwrap_err();
    assert!(is_tampered(&err, "plain", 0, &Tamper::NotSealed), "{err}");
    let conn = Connection::open(&path).unwrap();
    let macs: i64 = conn
        .query_row(
            "SELECT count(mac) FROM favur_records WHERE session = 'plain'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(macs, 0, "an unsealed session writes no MAC");
}

#[test]
fn a_deleted_newest_row_shows_only_against_a_head_kept_elsewhere() {
    let (_dir, path, store, _) = sealed_run("t");
    let head = store.seal_head().unwrap();
    drop(store);
    let conn = Connection::open(&path).unwrap();
    conn.execute(
        "DELETE FROM favur_records WHERE session = 't' AND seq = 5",
        [],
    )
    .unwrap();
    drop(conn);
    let store = SqliteStore::open_with(&path, "t", &sealed()).unwrap();
    // The data alone cannot tell: the store opens, and its head is not the one kept.
    assert_ne!(store.seal_head(), Some(head));
    assert_eq!(store.seal_head().unwrap().seq, 4);
}

#[test]
fn a_sealed_sqlite_row_edited_after_open_is_refused_on_read_back_and_export() {
    let (_dir, path, store, a) = sealed_run("r");
    drop(store);
    let store = SqliteStore::open_with(&path, "r", &sealed()).unwrap();
    assert_eq!(store.history().recall(a).unwrap().message().text(), "aaaa");
    let conn = Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE favur_records SET body = replace(body, 'aaaa', 'aaax') WHERE session = 'r' AND seq = 1",
        [],
    )
    .unwrap();
    let err = store.history().recall(a).unwrap_err();
    assert!(err.to_string().contains("sequence 1 is tampered"), "{err}");
    let err = store.export_journal(Vec::new()).unwrap_err();
    assert!(is_tampered(&err, "r", 1, &Tamper::Mac), "{err}");
}

#[test]
fn export_and_import_keep_the_chain_and_import_converts_explicitly() {
    let (_dir, path, store, _) = sealed_run("src");
    let mut journal = Vec::new();
    store.export_journal(&mut journal).unwrap();
    let view = store.history().view().clone();
    let expected = texts(store.history());
    drop(store);
    // The export is a sealed journal: it reads with the key, not without.
    assert!(journal.starts_with(b"{\"sealed\":[\""));
    let keyed = OpenOptions::new().seal_key(key(7));
    let (read, report) = keyed.read(&journal[..]).unwrap();
    assert_eq!(read.view(), &view);
    assert_eq!(report.seal_head.unwrap().seq, 6);
    assert!(matches!(
        OpenOptions::new().read(&journal[..]),
        Err(JournalError::Tampered {
            problem: Tamper::KeyNeeded,
            ..
        })
    ));
    // A byte changed in the export is refused on import.
    let text = String::from_utf8(journal.clone()).unwrap();
    let edited = text.replace("bbbb", "bbbx");
    let err = SqliteStore::import_journal(&path, "bad", edited.as_bytes(), &sealed()).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Journal(JournalError::Tampered { seq: 3, .. })
        ),
        "{err}"
    );
    // Imported with the key: re-sealed, the same view, and it reopens verified.
    let store = SqliteStore::import_journal(&path, "dst", &journal[..], &sealed()).unwrap();
    assert_eq!(store.history().view(), &view);
    assert_eq!(store.seal_head().unwrap().seq, 5);
    drop(store);
    let store = SqliteStore::open_with(&path, "dst", &sealed()).unwrap();
    assert_eq!(texts(store.history()), expected);
    drop(store);
    // An unsealed session exported and imported with a key: the explicit conversion.
    let mut plain = SqliteStore::open(&path, "plain").unwrap();
    run(&mut plain);
    let mut unsealed = Vec::new();
    plain.export_journal(&mut unsealed).unwrap();
    drop(plain);
    assert!(unsealed.starts_with(b"{\"journal\":"));
    let converted =
        SqliteStore::import_journal(&path, "converted", &unsealed[..], &sealed()).unwrap();
    assert_eq!(converted.seal_head().unwrap().seq, 5);
    drop(converted);
    let err = SqliteStore::open(&path, "converted").unwrap_err();
    assert!(
        is_tampered(&err, "converted", 0, &Tamper::KeyNeeded),
        "{err}"
    );
}

#[test]
fn a_version_1_database_is_migrated_and_keeps_its_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let mut store = SqliteStore::open(&path, "old").unwrap();
    run(&mut store);
    let expected = texts(store.history());
    drop(store);
    // What version 1 wrote: no `mac` column.
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(
        "ALTER TABLE favur_records DROP COLUMN mac; UPDATE favur_schema_version SET version = 1",
    )
    .unwrap();
    drop(conn);
    let mut store = SqliteStore::open(&path, "old").unwrap();
    assert_eq!(texts(store.history()), expected);
    store.append(fuzzy!(user: "after the migration")).unwrap();
    drop(store);
    let conn = Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("SELECT version FROM favur_schema_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, favur_context::store::SCHEMA_VERSION);
    assert_eq!(version, 2);
    // A new sealed session in the migrated database.
    drop(conn);
    let mut sealed_store = SqliteStore::open_with(&path, "new", &sealed()).unwrap();
    run(&mut sealed_store);
    assert_eq!(sealed_store.seal_head().unwrap().seq, 5);
}

#[cfg(feature = "postgres")]
mod postgres {
    use super::*;
    use favur_context::AsyncStore;
    use favur_context::store::PgStore;
    use favur_context_tests::pg::with_server;
    use tokio_postgres::NoTls;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    async fn write(config: &str, session: &str) -> (favur_context::compact::View, EntryId) {
        let mut store = PgStore::open_with(config, session, &sealed())
            .await
            .unwrap();
        let mut first = None;
        for step in steps() {
            match step {
                Step::Pin(t) => drop(store.pin(strict!(system: t)).await.unwrap()),
                Step::User(t) => {
                    let id = store.append(fuzzy!(user: t)).await.unwrap();
                    first.get_or_insert(id);
                }
                Step::Assistant(t) => drop(store.append(fuzzy!(assistant: t)).await.unwrap()),
                Step::DropFirst => store
                    .apply(Compaction {
                        tier: NonZeroU8::new(2).unwrap(),
                        edits: vec![Edit::Drop { id: first.unwrap() }],
                        usage_after: None,
                    })
                    .await
                    .unwrap(),
            }
        }
        assert_eq!(store.seal_head().unwrap().seq, 5);
        let view = store.history().view().clone();
        store.close().await.unwrap();
        (view, first.unwrap())
    }

    #[test]
    fn every_edit_of_a_sealed_postgres_session_is_refused_with_its_sequence() {
        with_server("sealed postgres sessions", |server| {
            let config = server.config();
            block_on(async {
                let (client, connection) = tokio_postgres::connect(&config, NoTls).await.unwrap();
                tokio::spawn(connection);
                for (i, case) in cases().into_iter().enumerate() {
                    let session = format!("s{i}");
                    let (view, _) = write(&config, &session).await;
                    let again = PgStore::open_with(&config, &session, &sealed())
                        .await
                        .unwrap();
                    assert_eq!(again.history().view(), &view);
                    again.close().await.unwrap();
                    for sql in case.sql {
                        let n = client
                            .execute(&sql.replace("{s}", &session), &[])
                            .await
                            .unwrap();
                        assert!(n > 0, "{}: the edit changes rows", case.name);
                    }
                    let err = PgStore::open_with(&config, &session, &sealed())
                        .await
                        .unwrap_err();
                    assert!(
                        is_tampered(&err, &session, case.seq, &case.problem),
                        "{}: {err}",
                        case.name
                    );
                }
                // Another key, no key.
                write(&config, "k").await;
                let other = SessionOptions::new().seal_key(key(8));
                let err = PgStore::open_with(&config, "k", &other).await.unwrap_err();
                assert!(is_tampered(&err, "k", 0, &Tamper::Mac), "{err}");
                let err = PgStore::open(&config, "k").await.unwrap_err();
                assert!(is_tampered(&err, "k", 0, &Tamper::KeyNeeded), "{err}");
            });
        });
    }

    #[test]
    fn a_sealed_postgres_session_checks_read_back_and_keeps_the_chain_through_export() {
        with_server("sealed postgres read-back", |server| {
            let config = server.config();
            block_on(async {
                let (view, a) = write(&config, "r").await;
                let store = PgStore::open_with(&config, "r", &sealed()).await.unwrap();
                let mut journal = Vec::new();
                store.export_journal(&mut journal).await.unwrap();
                assert!(journal.starts_with(b"{\"sealed\":[\""));
                let imported = PgStore::import_journal(&config, "copy", &journal[..], &sealed())
                    .await
                    .unwrap();
                assert_eq!(imported.history().view(), &view);
                assert_eq!(
                    imported.seal_head().unwrap().seq,
                    store.seal_head().unwrap().seq
                );
                imported.close().await.unwrap();
                let (client, connection) = tokio_postgres::connect(&config, NoTls).await.unwrap();
                tokio::spawn(connection);
                assert_eq!(store.history().recall(a).unwrap().message().text(), "aaaa");
                client
                    .execute(
                        "UPDATE favur_records SET body = replace(body, 'aaaa', 'aaax') WHERE session = 'r' AND seq = 1",
                        &[],
                    )
                    .await
                    .unwrap();
                let err = store.history().recall(a).unwrap_err();
                assert!(err.to_string().contains("sequence 1 is tampered"), "{err}");
                store.close().await.unwrap();
            });
        });
    }
}
