//! The SQLite store against the journal, and its claims, bad rows and interchange.

use std::time::Duration;

use favur_context::{
    Compaction, Corruption, Edit, EntryId, History, JournaledHistory, SessionOptions, SqliteStore,
    Store, StoreError, fuzzy,
};
use rusqlite::Connection;

use super::agent::{agent_loop, assert_same, block_on};

fn db(dir: &tempfile::TempDir) -> std::path::PathBuf {
    dir.path().join("fleet.sqlite")
}

#[test]
fn the_same_agent_code_gives_the_same_history_on_memory_the_journal_and_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let mut memory = History::new();
    block_on(agent_loop(&mut memory, 0, 12)).unwrap();
    assert!(memory.compactions().len() >= 2, "the loop compacts");

    let journal_path = dir.path().join("agent.jsonl");
    let mut journal = JournaledHistory::open(&journal_path).unwrap();
    block_on(agent_loop(&mut journal, 0, 12)).unwrap();
    let mut sqlite = SqliteStore::open(db(&dir), "agent").unwrap();
    block_on(agent_loop(&mut sqlite, 0, 12)).unwrap();

    assert_same(journal.history(), &memory, "journal");
    assert_same(sqlite.history(), journal.history(), "sqlite");
    let held = sqlite.history().entries().len();
    assert!(
        held < sqlite.history().len(),
        "evicted originals: {held} held"
    );
    drop((journal, sqlite));

    // Reopened, both resume with the same history, and go on alike.
    let mut journal = JournaledHistory::open(&journal_path).unwrap();
    let mut sqlite = SqliteStore::open(db(&dir), "agent").unwrap();
    assert_same(sqlite.history(), journal.history(), "reopened");
    block_on(agent_loop(&mut memory, 12, 3)).unwrap();
    block_on(agent_loop(&mut journal, 12, 3)).unwrap();
    block_on(agent_loop(&mut sqlite, 12, 3)).unwrap();
    assert_same(sqlite.history(), &memory, "resumed");
    assert_same(journal.history(), &memory, "resumed journal");
}

#[test]
fn a_second_writer_is_refused_and_a_writer_taken_over_is_fenced_for_good() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = SqliteStore::open(db(&dir), "s").unwrap();
    first.append(fuzzy!(user: "one")).unwrap();
    let err = SqliteStore::open(db(&dir), "s").unwrap_err();
    match &err {
        StoreError::Claimed { session, owner, .. } => {
            assert_eq!(session, "s");
            assert_eq!(owner, first.owner());
        }
        other => panic!("not refused: {other}"),
    }
    drop(first);

    // A writer whose lease runs out (a zero lease: at once) is taken over.
    let expired = SessionOptions::new().lease(Duration::ZERO);
    let mut old = SqliteStore::open_with(db(&dir), "s", &expired).unwrap();
    old.append(fuzzy!(user: "two")).unwrap();
    let mut new = SqliteStore::open(db(&dir), "s").unwrap();
    assert_eq!((old.epoch(), new.epoch()), (2, 3), "epochs increase");
    for attempt in ["three", "four"] {
        let err = old.append(fuzzy!(user: "{attempt}")).unwrap_err();
        assert!(matches!(err, StoreError::Fenced { epoch: 2, .. }), "{err}");
    }
    assert!(old.is_fenced());
    assert!(matches!(old.renew(), Err(StoreError::Fenced { .. })));
    new.append(fuzzy!(user: "five")).unwrap();
    drop((old, new));

    let store = SqliteStore::open(db(&dir), "s").unwrap();
    let texts: Vec<String> = store
        .history()
        .entries()
        .iter()
        .map(|e| e.message().text())
        .collect();
    assert_eq!(
        texts,
        ["one", "two", "five"],
        "nothing of the fenced writer"
    );
    let conn = Connection::open(db(&dir)).unwrap();
    let stale: i64 = conn
        .query_row(
            "SELECT count(*) FROM favur_records r JOIN favur_sessions s USING (session) WHERE r.epoch > s.epoch",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stale, 0);
}

#[test]
fn many_sessions_share_one_file_and_a_failed_write_records_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = SqliteStore::open(db(&dir), "a").unwrap();
    let mut b = SqliteStore::open(db(&dir), "b").unwrap();
    let x = a.append(fuzzy!(user: "a0")).unwrap();
    b.append(fuzzy!(user: "b0")).unwrap();
    b.append(fuzzy!(user: "b1")).unwrap();
    let bad = Compaction {
        tier: 1,
        edits: vec![Edit::Drop { id: EntryId(9) }],
        usage_after: None,
    };
    let err = a.apply(bad).unwrap_err();
    assert!(
        matches!(err, StoreError::Record { ref session, .. } if session == "a"),
        "{err}"
    );
    assert_eq!(a.history().len(), 1);
    assert_eq!(a.record(Vec::new()).unwrap(), EntryId(1));
    a.apply(Compaction {
        tier: 2,
        edits: vec![Edit::Drop { id: x }],
        usage_after: None,
    })
    .unwrap();
    drop((a, b));
    let a = SqliteStore::open(db(&dir), "a").unwrap();
    let b = SqliteStore::open(db(&dir), "b").unwrap();
    assert!(a.history().view().is_empty());
    assert_eq!(a.history().recall(x).unwrap().message().text(), "a0");
    assert_eq!(b.history().len(), 2);
}

/// A session of three rows, then `sql` run on the file; what opening it says.
fn open_after(sql: &str) -> StoreError {
    let dir = tempfile::tempdir().unwrap();
    let mut s = SqliteStore::open(db(&dir), "job").unwrap();
    for i in 0..3 {
        s.append(fuzzy!(user: "m{i}")).unwrap();
    }
    drop(s);
    Connection::open(db(&dir))
        .unwrap()
        .execute_batch(sql)
        .unwrap();
    SqliteStore::open(db(&dir), "job").unwrap_err()
}

#[test]
fn bad_rows_are_typed_errors_naming_the_session_and_sequence() {
    let err = open_after("UPDATE favur_records SET body = '{\"entry\":' WHERE seq = 1");
    assert!(
        matches!(&err, StoreError::Corrupt { session, seq: 1, problem: Corruption::InvalidJson { .. } } if session == "job"),
        "{err}"
    );
    let err = open_after(
        "UPDATE favur_records SET body = replace(body, '\"fuzzy\"', '\"eternal\"') WHERE seq = 2",
    );
    assert!(
        matches!(
            err,
            StoreError::Corrupt {
                seq: 2,
                problem: Corruption::UnknownClass { .. },
                ..
            }
        ),
        "{err}"
    );
    let err = open_after("UPDATE favur_records SET body = X'ff00' WHERE seq = 0");
    assert!(
        matches!(
            err,
            StoreError::Corrupt {
                seq: 0,
                problem: Corruption::InvalidUtf8 { .. },
                ..
            }
        ),
        "{err}"
    );
    let err = open_after("DELETE FROM favur_records WHERE seq = 1");
    assert!(
        matches!(
            err,
            StoreError::Sequence {
                expected: 1,
                found: 2,
                ..
            }
        ),
        "{err}"
    );
    let err = open_after("UPDATE favur_records SET first_id = 7 WHERE seq = 2");
    assert!(
        matches!(
            err,
            StoreError::Corrupt {
                seq: 2,
                problem: Corruption::IdOrder { .. },
                ..
            }
        ),
        "{err}"
    );
    let err = open_after("UPDATE favur_schema_version SET version = 99");
    assert!(
        matches!(
            err,
            StoreError::Schema {
                found: 99,
                supported: 1
            }
        ),
        "{err}"
    );
    let err = open_after("UPDATE favur_sessions SET counter = 'tiktoken/o200k'");
    assert!(
        matches!(err, StoreError::Counter { ref recorded, .. } if recorded == "tiktoken/o200k"),
        "{err}"
    );
    assert!(err.to_string().contains("session `job`"));
}

#[test]
fn a_session_round_trips_through_the_journal_format() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(db(&dir), "from").unwrap();
    block_on(agent_loop(&mut store, 0, 10)).unwrap();
    let path = dir.path().join("exported.jsonl");
    store
        .export_journal(std::fs::File::create(&path).unwrap())
        .unwrap();
    // What the replay and audit tools read: a journal that opens as one.
    let journal = JournaledHistory::open(&path).unwrap();
    assert_same(journal.history(), store.history(), "exported");
    let file = std::fs::File::open(&path).unwrap();
    let back = SqliteStore::import_journal(db(&dir), "to", file, &SessionOptions::new()).unwrap();
    assert_same(back.history(), store.history(), "imported");
    // The generic export of any history gives the same view.
    let mut generic = Vec::new();
    favur_context::export_journal(store.history(), &mut generic).unwrap();
    let (replayed, _) = History::from_journal(&generic[..]).unwrap();
    assert_same(&replayed, store.history(), "generic export");
    // Importing into a session that holds records is refused; a bad journal imports nothing.
    let file = std::fs::File::open(&path).unwrap();
    drop(back);
    let err =
        SqliteStore::import_journal(db(&dir), "to", file, &SessionOptions::new()).unwrap_err();
    assert!(matches!(err, StoreError::NotEmpty { .. }), "{err}");
    let bad = "{\"journal\":{\"format\":1,\"framing_tokens\":4}}\n{\"entry\":{\"id\":3}}\n";
    let err = SqliteStore::import_journal(db(&dir), "bad", bad.as_bytes(), &SessionOptions::new())
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Journal(favur_context::JournalError::Corrupt { line: 2, .. })
        ),
        "{err}"
    );
}
