//! Recall from PostgreSQL for a synchronous caller: a thread of the store's own, with its
//! own current-thread runtime and connection, answers [`Originals::original`] over std
//! channels, so recall works from anywhere, inside a tokio runtime too (where blocking on
//! a future would panic).

use std::sync::Arc;
use std::sync::mpsc::{self, Sender, SyncSender};
use std::thread;

use crate::database::StoreError;
use crate::database::rows;
use crate::history::Originals;
use crate::history::RecallError;
use crate::model::entry::{Entry, EntryId};

/// A row found for an id (its seq, body, MAC and the MAC before it), or what went wrong.
type Found = Result<Option<rows::Found>, String>;

/// The database as a history's [`Originals`]: requests to the reader thread.
pub(crate) struct PgOriginals {
    session: String,
    /// The history's counter: an original read back is recounted as on replay.
    counter: Arc<dyn crate::tokens::counter::TokenCounter>,
    requests: Sender<(EntryId, SyncSender<Found>)>,
    /// A sealed session's key and chain id: every row read back is verified.
    sealed: Option<(Arc<crate::store_trait::seal::SealKey>, Vec<u8>)>,
}

impl PgOriginals {
    /// Starts the reader thread for `session` on the server `config` names. It connects
    /// on the first recall (and again after a lost connection), and ends when the
    /// history holding this reader is dropped.
    pub(crate) fn start(
        config: &str,
        session: &str,
        counter: Arc<dyn crate::tokens::counter::TokenCounter>,
        sealed: Option<(Arc<crate::store_trait::seal::SealKey>, Vec<u8>)>,
    ) -> Result<PgOriginals, StoreError> {
        let (requests, incoming) = mpsc::channel::<(EntryId, SyncSender<Found>)>();
        let config = config.to_owned();
        let name = session.to_owned();
        thread::Builder::new()
            .name("favur-pg-recall".into())
            .spawn(move || serve(&config, &name, &incoming))
            .map_err(|e| StoreError::database(session, "start the recall thread of", e))?;
        Ok(PgOriginals {
            session: session.to_owned(),
            counter,
            requests,
            sealed,
        })
    }
}

/// Answers recall requests until every sender is gone.
fn serve(config: &str, session: &str, incoming: &mpsc::Receiver<(EntryId, SyncSender<Found>)>) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            for (_, reply) in incoming {
                let _ = reply.send(Err(format!("no runtime for the recall thread: {e}")));
            }
            return;
        }
    };
    let mut client = None;
    for (id, reply) in incoming {
        let found = runtime.block_on(async {
            if client.is_none() {
                let c = super::pg_connect::connect(config, session, None)
                    .await
                    .map_err(|e| e.to_string())?;
                client = Some(c);
            }
            let Some(c) = &client else {
                return Err("not connected".to_owned());
            };
            let at = i64::try_from(id.0).unwrap_or(i64::MAX);
            let row = c
                .query_opt(
                    "SELECT r.seq, r.body, r.mac, p.mac FROM favur_records r LEFT JOIN favur_records p ON p.session = r.session AND p.seq = r.seq - 1 WHERE r.session = $1 AND r.first_id <= $2 AND r.first_id + r.ids > $2 ORDER BY r.first_id DESC LIMIT 1",
                    &[&session, &at],
                )
                .await
                .map_err(|e| e.to_string());
            match row {
                Ok(Some(r)) => {
                    let seq: i64 = r.try_get(0).map_err(|e| e.to_string())?;
                    let body: String = r.try_get(1).map_err(|e| e.to_string())?;
                    let mac: Option<String> = r.try_get(2).map_err(|e| e.to_string())?;
                    let prev: Option<String> = r.try_get(3).map_err(|e| e.to_string())?;
                    let bytes = |s: Option<String>| s.map(String::into_bytes);
                    Ok(Some((seq, body.into_bytes(), bytes(mac), bytes(prev))))
                }
                Ok(None) => Ok(None),
                Err(e) => {
                    client = None; // connect again on the next recall
                    Err(e)
                }
            }
        });
        let _ = reply.send(found);
    }
}

impl Originals for PgOriginals {
    fn original(&self, id: EntryId) -> Result<Entry, RecallError> {
        let (reply, answer) = mpsc::sync_channel(1);
        let found = match self.requests.send((id, reply)) {
            Ok(()) => answer
                .recv()
                .unwrap_or_else(|_| Err("the recall thread stopped".into())),
            Err(_) => Err("the recall thread stopped".into()),
        };
        let sealed = self.sealed.as_ref();
        rows::original(&self.session, id, found, self.counter.as_ref(), sealed)
    }
}
