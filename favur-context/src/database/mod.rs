//! The database stores: [`SqliteStore`] (feature `sqlite`) and [`PgStore`] (feature
//! `postgres`), each a [`Store`](crate::Store) of one session in a database, leased by one
//! writer at a time ([`Claim`]), sharing the session protocol (`session`), the rows a
//! session is kept as (`rows`) and the import of a journal (`interchange`).

/// The database stores' schema, one script per version (`MIGRATIONS[v]` takes version
/// `v` to `v + 1`), with the database's type of integer and of time columns.
macro_rules! migrations {
    (integer = $int:literal, time = $time:literal) => {
        &[
            concat!(
                "
CREATE TABLE favur_sessions (
    session        TEXT PRIMARY KEY,
    framing_tokens INTEGER NOT NULL,
    counter        TEXT NOT NULL,
    epoch          ",
                $int,
                " NOT NULL,
    owner          TEXT,
    lease_until    ",
                $time,
                " NOT NULL
);
CREATE TABLE favur_records (
    session  TEXT NOT NULL REFERENCES favur_sessions (session),
    seq      ",
                $int,
                " NOT NULL,
    first_id ",
                $int,
                " NOT NULL,
    ids      ",
                $int,
                " NOT NULL,
    epoch    ",
                $int,
                " NOT NULL,
    body     TEXT NOT NULL,
    PRIMARY KEY (session, seq)
);
CREATE INDEX favur_records_by_id ON favur_records (session, first_id);
"
            ),
            "
ALTER TABLE favur_records ADD COLUMN mac TEXT;
",
        ]
    };
}

mod claim;
mod error;
mod interchange;
#[cfg(feature = "postgres")]
mod pg_connect;
#[cfg(feature = "postgres")]
mod pg_originals;
#[cfg(feature = "postgres")]
mod postgres;
mod rows;
mod sealing;
mod session;
mod setup;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "sqlite")]
mod sqlite_originals;

pub use error::StoreError;
#[cfg(feature = "postgres")]
pub use postgres::PgStore;
pub use session::{Claim, DEFAULT_LEASE, SessionOptions};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
