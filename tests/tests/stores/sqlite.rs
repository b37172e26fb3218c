//! The SQLite store against the journal, and its claims, bad rows and interchange.

use std::num::NonZeroU8;
use std::time::Duration;

use favur_context::compact::{Compaction, Edit};
use favur_context::journal::{Corruption, JournaledHistory};
use favur_context::store::{SessionOptions, SqliteStore, StoreError};
use favur_context::{EntryId, History, Store, fuzzy};
use rusqlite::Connection;

use super::agent::{
    Expected, agent_loop, assert_refused, assert_same, block_on, damages, three_rows,
};

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
            assert_eq!(owner, first.claim().owner());
        }
        other => panic!("not refused: {other}"),
    }
    drop(first);

    // A writer whose lease runs out (a zero lease: at once) is taken over.
    let expired = SessionOptions::new().lease(Duration::ZERO);
    let mut old = SqliteStore::open_with(db(&dir), "s", &expired).unwrap();
    old.append(fuzzy!(user: "two")).unwrap();
    let mut new = SqliteStore::open(db(&dir), "s").unwrap();
    assert_eq!(
        (old.claim().epoch(), new.claim().epoch()),
        (2, 3),
        "epochs increase"
    );
    for attempt in ["three", "four"] {
        let err = old.append(fuzzy!(user: "{attempt}")).unwrap_err();
        assert!(matches!(err, StoreError::Fenced { epoch: 2, .. }), "{err}");
    }
    assert!(old.claim().is_fenced());
    assert!(matches!(old.renew(), Err(StoreError::Fenced { .. })));
    new.append(fuzzy!(user: "five")).unwrap();
    drop((old, new));

    let store = SqliteStore::open(db(&dir), "s").unwrap();
    assert_eq!(
        crate::common::texts(store.history()),
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
        tier: NonZeroU8::MIN,
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
    crate::common::drop_at(&mut a, 2, x);
    drop((a, b));
    let a = SqliteStore::open(db(&dir), "a").unwrap();
    let b = SqliteStore::open(db(&dir), "b").unwrap();
    assert!(a.history().view().is_empty());
    assert_eq!(a.history().recall(x).unwrap().message().text(), "a0");
    assert_eq!(b.history().len(), 2);
}

#[test]
fn bad_rows_are_typed_errors_naming_the_session_and_sequence() {
    let not_utf8: (&str, Expected) = (
        "UPDATE favur_records SET body = X'ff00' WHERE seq = 0",
        |e| {
            matches!(
                e,
                StoreError::Corrupt {
                    seq: 0,
                    problem: Corruption::InvalidUtf8 { .. },
                    ..
                }
            )
        },
    );
    for (sql, expected) in damages().into_iter().chain([not_utf8]) {
        let dir = tempfile::tempdir().unwrap();
        let mut s = SqliteStore::open(db(&dir), "job").unwrap();
        block_on(three_rows(&mut s));
        drop(s);
        let sql = sql.replace("$S", "job");
        Connection::open(db(&dir))
            .unwrap()
            .execute_batch(&sql)
            .unwrap();
        let err = SqliteStore::open(db(&dir), "job").unwrap_err();
        assert_refused("job", &sql, expected, &err);
        // Nothing was loaded, and the claim was given back: the same error again.
        let again = SqliteStore::open(db(&dir), "job").unwrap_err();
        assert_refused("job", &sql, expected, &again);
    }
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
    favur_context::journal::export_journal(store.history(), &mut generic).unwrap();
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
            StoreError::Journal(favur_context::journal::JournalError::Corrupt { line: 2, .. })
        ),
        "{err}"
    );
}

#[test]
fn a_checked_compaction_is_refused_once_stale_and_written_once_current() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(db(&dir), "s").unwrap();
    let id = store.append(fuzzy!(user: "x")).unwrap();
    let compaction = crate::common::drop_record(2, id);
    let stale = store.history().check(compaction.clone()).unwrap();
    store.append(fuzzy!(user: "y")).unwrap();
    let err = store.apply_checked(stale).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Record {
                source: favur_context::store::RecordError::Stale,
                ..
            }
        ),
        "{err}"
    );
    assert!(store.history().compactions().is_empty());
    let checked = store.history().check(compaction).unwrap();
    store.apply_checked(checked).unwrap();
    let view = store.history().view().clone();
    drop(store);
    // Written once: the reopened session holds the compaction, and only it.
    let reopened = SqliteStore::open(db(&dir), "s").unwrap();
    assert_eq!(reopened.history().view(), &view);
    assert_eq!(reopened.history().compactions().len(), 1);
}

#[test]
fn a_count_edited_in_a_row_is_recounted_when_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(db(&dir), "s").unwrap();
    let long = store
        .append(fuzzy!(user: "{}", "a long listing line\n".repeat(300)))
        .unwrap();
    store.append(fuzzy!(assistant: "read it")).unwrap();
    let counted = store.history().recall(long).unwrap().tokens();
    favur_context::Compactor::new(favur_context::Policy::for_window(4_000).unwrap())
        .compact_at(&mut store, NonZeroU8::new(2).unwrap())
        .unwrap();
    assert!(
        store.history().entries().iter().all(|e| e.id() != long),
        "evicted"
    );
    drop(store);
    let conn = Connection::open(db(&dir)).unwrap();
    let edited = conn
        .execute(
            &format!("UPDATE favur_records SET body = replace(body, '\"tokens\":{counted}', '\"tokens\":0')"),
            [],
        )
        .unwrap();
    assert!(edited >= 1, "the count is in a row");
    drop(conn);
    let store = SqliteStore::open(db(&dir), "s").unwrap();
    let back = store.history().recall(long).unwrap();
    assert_eq!(
        back.tokens(),
        counted,
        "read back and recounted, not believed"
    );
}

#[test]
fn an_absurd_framing_in_the_session_row_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(db(&dir), "s").unwrap();
    store.append(fuzzy!(user: "one")).unwrap();
    drop(store);
    let conn = Connection::open(db(&dir)).unwrap();
    conn.execute("UPDATE favur_sessions SET framing_tokens = 4294967295", [])
        .unwrap();
    drop(conn);
    let err = SqliteStore::open(db(&dir), "s").unwrap_err();
    match &err {
        StoreError::Corrupt {
            session, problem, ..
        } => {
            assert_eq!(session, "s");
            assert!(
                matches!(problem, Corruption::InvalidHeader { .. }),
                "{problem}"
            );
            assert!(
                err.to_string().contains("framing_tokens 4294967295"),
                "{err}"
            );
        }
        other => panic!("not refused: {other}"),
    }
}
