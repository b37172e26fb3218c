//! Recall from SQLite: the database as a history's [`Originals`], on a read-only
//! connection of its own, every row read back verified in a sealed session.

use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::{Connection, OptionalExtension, params};

use crate::database::rows;
use crate::history::{Originals, RecallError};
use crate::model::entry::{Entry, EntryId};

/// The database as a history's [`Originals`]: a read-only connection of its own.
pub(super) struct SqliteOriginals {
    pub(super) session: String,
    pub(super) conn: Mutex<Connection>,
    /// The history's counter: an original read back is recounted as on replay.
    pub(super) counter: Arc<dyn crate::tokens::counter::TokenCounter>,
    /// A sealed session's key and chain id: every row read back is verified.
    pub(super) sealed: Option<(Arc<crate::store_trait::seal::SealKey>, Vec<u8>)>,
}

impl Originals for SqliteOriginals {
    fn original(&self, id: EntryId) -> Result<Entry, RecallError> {
        let conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let at = i64::try_from(id.0).unwrap_or(i64::MAX);
        let found = conn
            .query_row(
                "SELECT r.seq, r.body, r.mac, p.mac FROM favur_records r LEFT JOIN favur_records p ON p.session = r.session AND p.seq = r.seq - 1 WHERE r.session = ?1 AND r.first_id <= ?2 AND r.first_id + r.ids > ?2 ORDER BY r.first_id DESC LIMIT 1",
                params![self.session, at],
                |r| {
                    let bytes = |i| -> rusqlite::Result<Option<Vec<u8>>> {
                        Ok(r.get_ref(i)?.as_bytes_or_null()?.map(<[u8]>::to_vec))
                    };
                    Ok((r.get(0)?, r.get_ref(1)?.as_bytes()?.to_vec(), bytes(2)?, bytes(3)?))
                },
            )
            .optional()
            .map_err(|e| e.to_string());
        let sealed = self.sealed.as_ref();
        rows::original(&self.session, id, found, self.counter.as_ref(), sealed)
    }
}
