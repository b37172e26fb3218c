//! A connection to PostgreSQL with a session's timeouts, and its failures said in full.

use std::time::Duration;

use tokio_postgres::{Client, NoTls};

use crate::database::StoreError;
use crate::database::session::SessionOptions;

/// A database failure of `session`, saying what the server said (a
/// [`tokio_postgres::Error`] alone only says `db error`).
pub(crate) fn db_error(
    session: &str,
    action: &'static str,
    e: tokio_postgres::Error,
) -> StoreError {
    let message = match e.as_db_error() {
        Some(db) => format!("{e}: {}: {}", db.severity(), db.message()),
        None => match std::error::Error::source(&e) {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        },
    };
    StoreError::database(session, action, Described { message, source: e })
}

/// An error with a fuller message than its source's.
#[derive(Debug)]
struct Described {
    message: String,
    source: tokio_postgres::Error,
}

impl std::fmt::Display for Described {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Described {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// The least lock and idle-in-transaction timeout a writer's connection gets.
const MIN_SESSION_TIMEOUT: Duration = Duration::from_millis(500);

/// A connection to `config` (a libpq-style connection string), its task spawned, with the
/// statement timeout of `options` and, for a writer, lock, idle-in-transaction and TCP
/// keepalive timeouts from its lease.
pub(crate) async fn connect(
    config: &str,
    session: &str,
    options: Option<&SessionOptions>,
) -> Result<Client, StoreError> {
    let db = |e| db_error(session, "connect to the database of", e);
    let mut cfg: tokio_postgres::Config = config.parse().map_err(db)?;
    // A writer's connection never outlives its lease by much: half the lease (at least
    // `MIN_SESSION_TIMEOUT`, so that a tiny lease leaves its own transactions room)
    // bounds how long it waits for a lock, how long the server keeps its transaction open
    // while it sends nothing (frozen, stopped, partitioned), and when TCP starts probing
    // a peer that went silent. A frozen writer so loses its session within about its lease.
    let half = options.map(|o| (o.lease_duration() / 2).max(MIN_SESSION_TIMEOUT));
    if let Some(half) = half {
        cfg.keepalives(true)
            .keepalives_idle(half.max(Duration::from_secs(1)));
    }
    let (client, connection) = cfg.connect(NoTls).await.map_err(db)?;
    tokio::spawn(async move {
        // Ends when the client is dropped or the connection is lost; the client's
        // calls report the loss.
        let _ = connection.await;
    });
    let mut set = String::new();
    if let Some(half) = half {
        let ms = half.as_millis().max(1);
        set.push_str(&format!(
            "SET lock_timeout = {ms}; SET idle_in_transaction_session_timeout = {ms};"
        ));
    }
    if let Some(timeout) = options.and_then(|o| o.statement_timeout) {
        set.push_str(&format!(
            "SET statement_timeout = {};",
            timeout.as_millis().max(1)
        ));
    }
    if !set.is_empty() {
        client.batch_execute(&set).await.map_err(db)?;
    }
    Ok(client)
}
