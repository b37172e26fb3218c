//! The database stores: [`SqliteStore`] (feature `sqlite`) and [`PgStore`] (feature
//! `postgres`), each a [`Store`](crate::Store) of one session in a database, leased by one
//! writer at a time ([`Claim`]), sharing the session protocol (`session`), the rows a
//! session is kept as (`rows`) and the import of a journal (`interchange`).

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
