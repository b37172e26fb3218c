//! The stores behind one record protocol: the same agent code on the in-memory history,
//! the journal, SQLite and PostgreSQL, with the same history, view and recall; one writer
//! per session; damaged rows refused by name; interchange through the journal format.
#![cfg(feature = "sqlite")]

#[path = "stores/agent.rs"]
mod agent;
#[path = "stores/budget.rs"]
mod budget;
#[cfg(feature = "postgres")]
#[path = "stores/commit_kills.rs"]
mod commit_kills;
mod common;
#[cfg(feature = "postgres")]
#[path = "stores/postgres.rs"]
mod postgres;
#[path = "stores/sqlite.rs"]
mod sqlite;
