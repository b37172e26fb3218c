//! `open_or_create` on the database stores, with the journal's semantics: the setup
//! entries (the system prompt, the task) are written once, as one batch, when the session
//! holds no record, so a restart never writes them twice and a kill during setup leaves
//! a session that is still new.

#[cfg(feature = "postgres")]
use crate::database::PgStore;
#[cfg(feature = "sqlite")]
use crate::database::SqliteStore;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use crate::database::{SessionOptions, StoreError};
use crate::history::NewEntry;

#[cfg(feature = "sqlite")]
impl SqliteStore {
    /// Opens `session` (as [`open_with`](SqliteStore::open_with)), or, when it holds no
    /// record yet, creates it with the entries `setup` returns, written as one row (all
    /// or none). `setup` runs only then; [`created`](SqliteStore::created) says whether it
    /// did. On a resumed session, answer [`History::pending_calls`](crate::History::pending_calls)
    /// before the next request.
    ///
    /// # Errors
    ///
    /// As for [`open_with`](SqliteStore::open_with), and the write errors of the setup
    /// batch.
    ///
    /// ```
    /// use favur_context::store::{NewEntry, SessionOptions, SqliteStore};
    /// use favur_context::strict;
    /// # let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("agents.db");
    /// let setup = || vec![
    ///     NewEntry::pinned(strict!(system: "You are a coding agent.")),
    ///     NewEntry::appended(strict!(user: "Make the tests pass.")),
    /// ];
    /// let options = SessionOptions::new().owner("worker-1");
    /// let first = SqliteStore::open_or_create(&path, "job-7", &options, setup)?;
    /// assert!(first.created());
    /// drop(first);
    /// let again = SqliteStore::open_or_create(&path, "job-7", &options, setup)?; // no setup
    /// assert!(!again.created());
    /// assert_eq!((again.history().pinned().len(), again.history().len()), (1, 2));
    /// # Ok::<(), favur_context::store::StoreError>(())
    /// ```
    pub fn open_or_create(
        path: impl AsRef<std::path::Path>,
        session: &str,
        options: &SessionOptions,
        setup: impl FnOnce() -> Vec<NewEntry>,
    ) -> Result<SqliteStore, StoreError> {
        let mut store = SqliteStore::open_with(path, session, options)?;
        if store.core.next_seq == 0 {
            crate::store_trait::Store::record(&mut store, setup())?;
            store.core.created = true;
        }
        Ok(store)
    }
}

#[cfg(feature = "postgres")]
impl PgStore {
    /// Opens `session` (as [`open_with`](PgStore::open_with)), or, when it holds no record
    /// yet, creates it with the entries `setup` returns, written as one row (all or none).
    /// `setup` runs only then; [`created`](PgStore::created) says whether it did. A
    /// restart with the same [`owner`](SessionOptions::owner) takes its own claim back at
    /// once, and finds the session set up.
    ///
    /// # Errors
    ///
    /// As for [`open_with`](PgStore::open_with), and the write errors of the setup batch.
    pub async fn open_or_create(
        config: &str,
        session: &str,
        options: &SessionOptions,
        setup: impl FnOnce() -> Vec<NewEntry>,
    ) -> Result<PgStore, StoreError> {
        let mut store = PgStore::open_with(config, session, options).await?;
        if store.core.next_seq == 0 {
            crate::store_trait::AsyncStore::record(&mut store, setup()).await?;
            store.core.created = true;
        }
        Ok(store)
    }
}

/// The accessors of what an open found, the same on both database stores; the attributes
/// given end `seal_head`'s documentation (an example).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
macro_rules! setup_accessors {
    ($store:ident $(, $(#[$seal_doc:meta])*)?) => {
        impl $store {
            /// Whether [`open_or_create`](Self::open_or_create) found the session new and
            /// wrote its setup entries (false for every other open).
            pub fn created(&self) -> bool {
                self.core.created
            }

            /// The newest row of a sealed session (its sequence number and MAC), `None` for an
            /// unsealed or empty one: see [`SessionOptions::seal_key`]. Keep it outside the
            /// database to detect, on the next open, that its newest rows were deleted.
            $($(#[$seal_doc])*)?
            pub fn seal_head(&self) -> Option<crate::store_trait::seal::SealHead> {
                self.core.seal_head()
            }
        }
    };
}

#[cfg(feature = "sqlite")]
setup_accessors!(
    SqliteStore,
    ///
    /// ```
    /// use favur_context::store::{SealKey, SessionOptions, SqliteStore};
    /// use favur_context::{fuzzy, Store};
    /// # let dir = tempfile::tempdir().unwrap();
    /// let options = SessionOptions::new().seal_key(SealKey::new([5u8; 32]).unwrap());
    /// let mut store = SqliteStore::open_with(dir.path().join("s.db"), "job", &options)?;
    /// assert!(store.seal_head().is_none());
    /// store.append(fuzzy!(user: "hi"))?;
    /// assert_eq!(store.seal_head().unwrap().seq, 0);
    /// # Ok::<(), favur_context::store::StoreError>(())
    /// ```
);
#[cfg(feature = "postgres")]
setup_accessors!(PgStore);
