//! The request budget on every store: the tools' definitions set as the request overhead
//! through `Store`/`AsyncStore`, recorded where the store persists (so a reopened session
//! budgets the same), and the output reserve, giving the same usage and the same
//! compactions on memory, the journal, SQLite and PostgreSQL.

use favur_context::journal::JournaledHistory;
use favur_context::store::{SessionOptions, SqliteStore};
use favur_context::{AsyncStore, History, Store, fuzzy};
use rusqlite::Connection;

use super::agent::{agent_loop, assert_same, block_on, budgeted_loop, tools};

/// What the tools' definitions cost with the default counter: the budgeted loop's overhead.
fn overhead() -> u64 {
    tools().definitions_tokens(History::new().counter())
}

/// The rows of `session` in the SQLite database at `path`.
fn rows(path: &std::path::Path, session: &str) -> i64 {
    let conn = Connection::open(path).unwrap();
    conn.query_row(
        "SELECT count(*) FROM favur_records WHERE session = ?1",
        [session],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn the_request_budget_gives_the_same_usage_and_compactions_on_memory_the_journal_and_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let mut plain = History::new();
    block_on(agent_loop(&mut plain, 0, 12)).unwrap();
    let mut memory = History::new();
    block_on(budgeted_loop(&mut memory, 0, 12)).unwrap();
    assert!(overhead() > 50, "the tools cost {}", overhead());
    assert_eq!(memory.request_overhead_tokens(), overhead());
    assert!(
        memory.compactions().len() > plain.compactions().len(),
        "the budget compacts sooner: {} vs {} compactions",
        memory.compactions().len(),
        plain.compactions().len()
    );

    let journal_path = dir.path().join("agent.jsonl");
    let db = dir.path().join("agents.sqlite");
    let mut journal = JournaledHistory::open(&journal_path).unwrap();
    block_on(budgeted_loop(&mut journal, 0, 12)).unwrap();
    let mut sqlite = SqliteStore::open(&db, "agent").unwrap();
    block_on(budgeted_loop(&mut sqlite, 0, 12)).unwrap();
    assert_same(journal.history(), &memory, "journal");
    assert_same(sqlite.history(), &memory, "sqlite");
    drop((journal, sqlite));

    // Reopened, both budget as before they closed, with nothing set yet.
    let mut journal = JournaledHistory::open(&journal_path).unwrap();
    let mut sqlite = SqliteStore::open(&db, "agent").unwrap();
    assert_eq!(journal.history().request_overhead_tokens(), overhead());
    assert_eq!(sqlite.history().request_overhead_tokens(), overhead());
    assert_same(sqlite.history(), &memory, "sqlite reopened");
    assert_same(journal.history(), &memory, "journal reopened");

    // Setting the same overhead again on every start writes nothing.
    let (lines, stored) = (std::fs::read(&journal_path).unwrap(), rows(&db, "agent"));
    Store::budget_tools(&mut journal, &tools()).unwrap();
    Store::budget_tools(&mut sqlite, &tools()).unwrap();
    assert_eq!(std::fs::read(&journal_path).unwrap(), lines);
    assert_eq!(rows(&db, "agent"), stored);

    block_on(budgeted_loop(&mut memory, 12, 3)).unwrap();
    block_on(budgeted_loop(&mut journal, 12, 3)).unwrap();
    block_on(budgeted_loop(&mut sqlite, 12, 3)).unwrap();
    assert_same(journal.history(), &memory, "journal resumed");
    assert_same(sqlite.history(), &memory, "sqlite resumed");
}

/// Appends, sets the overhead to 100, appends, sets it to 40: on any store.
async fn two_overheads<S: AsyncStore>(store: &mut S) {
    store.append(fuzzy!(user: "first")).await.unwrap();
    store.set_request_overhead_tokens(100).await.unwrap();
    store.append(fuzzy!(user: "second")).await.unwrap();
    store.set_request_overhead_tokens(40).await.unwrap();
}

#[test]
fn a_changed_overhead_is_recorded_and_the_last_one_holds_after_reopening_and_interchange() {
    let dir = tempfile::tempdir().unwrap();
    let mut memory = History::new();
    block_on(two_overheads(&mut memory));
    assert_eq!(memory.request_overhead_tokens(), 40);

    let journal_path = dir.path().join("two.jsonl");
    let db = dir.path().join("two.sqlite");
    let mut journal = JournaledHistory::open(&journal_path).unwrap();
    block_on(two_overheads(&mut journal));
    let mut sqlite = SqliteStore::open(&db, "two").unwrap();
    block_on(two_overheads(&mut sqlite));
    assert_eq!(rows(&db, "two"), 4, "two entries, two overhead records");
    let text = std::fs::read_to_string(&journal_path).unwrap();
    assert!(
        text.contains(r#"{"request_overhead":{"tokens":100}}"#)
            && text.contains(r#"{"request_overhead":{"tokens":40}}"#),
        "{text}"
    );
    // Interchange carries it: SQLite out as a journal, the in-memory history exported.
    let exported = dir.path().join("exported.jsonl");
    sqlite
        .export_journal(std::fs::File::create(&exported).unwrap())
        .unwrap();
    let mut from_memory = Vec::new();
    favur_context::journal::export_journal(&memory, &mut from_memory).unwrap();
    drop((journal, sqlite));

    let journal = JournaledHistory::open(&journal_path).unwrap();
    let sqlite = SqliteStore::open(&db, "two").unwrap();
    let exported = JournaledHistory::open(&exported).unwrap();
    let (imported, _) = History::from_journal(&from_memory[..]).unwrap();
    for (what, h) in [
        ("journal", journal.history()),
        ("sqlite", sqlite.history()),
        ("exported", exported.history()),
        ("imported", &imported),
    ] {
        assert_eq!(h.request_overhead_tokens(), 40, "{what}");
        assert_same(h, &memory, what);
    }
    let file = std::fs::File::open(dir.path().join("exported.jsonl")).unwrap();
    let options = SessionOptions::new();
    let back = SqliteStore::import_journal(&db, "back", file, &options).unwrap();
    assert_same(back.history(), &memory, "imported into sqlite");
}

#[test]
fn a_malformed_overhead_record_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bad.sqlite");
    let mut sqlite = SqliteStore::open(&db, "bad").unwrap();
    Store::set_request_overhead_tokens(&mut sqlite, 7).unwrap();
    drop(sqlite);
    let conn = Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE favur_records SET body = '{\"request_overhead\":{\"tokens\":-1}}' WHERE session = 'bad'",
        [],
    )
    .unwrap();
    let err = SqliteStore::open(&db, "bad").unwrap_err();
    assert!(
        matches!(
            &err,
            favur_context::store::StoreError::Corrupt {
                seq: 0,
                problem: favur_context::journal::Corruption::InvalidRequestOverhead { .. },
                ..
            }
        ),
        "{err}"
    );
}

#[cfg(feature = "postgres")]
#[test]
fn the_request_budget_gives_the_same_usage_and_compactions_on_postgres() {
    use favur_context::store::PgStore;
    favur_context_tests::pg::with_server("postgres budget", |server| {
        let config = server.config();
        block_on(async {
            let mut memory = History::new();
            budgeted_loop(&mut memory, 0, 12).await.unwrap();
            let mut pg = PgStore::open(&config, "budget").await.unwrap();
            budgeted_loop(&mut pg, 0, 12).await.unwrap();
            assert_same(pg.history(), &memory, "postgres");
            pg.close().await.unwrap();

            let mut pg = PgStore::open(&config, "budget").await.unwrap();
            assert_eq!(pg.history().request_overhead_tokens(), overhead());
            assert_same(pg.history(), &memory, "postgres reopened");
            budgeted_loop(&mut memory, 12, 3).await.unwrap();
            budgeted_loop(&mut pg, 12, 3).await.unwrap();
            assert_same(pg.history(), &memory, "postgres resumed");
            pg.close().await.unwrap();

            let mut two = History::new();
            two_overheads(&mut two).await;
            let mut pg = PgStore::open(&config, "two").await.unwrap();
            two_overheads(&mut pg).await;
            pg.close().await.unwrap();
            let pg = PgStore::open(&config, "two").await.unwrap();
            assert_eq!(pg.history().request_overhead_tokens(), 40);
            assert_same(pg.history(), &two, "postgres, two overheads");
            pg.close().await.unwrap();
        });
    });
}
