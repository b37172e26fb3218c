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

/// A row found for an id: `(seq, body)`, or what went wrong.
type Found = Result<Option<(i64, Vec<u8>)>, String>;

/// The database as a history's [`Originals`]: requests to the reader thread.
pub(crate) struct PgOriginals {
    session: String,
    /// The history's counter: an original read back is recounted as on replay.
    counter: Arc<dyn crate::tokens::counter::TokenCounter>,
    requests: Sender<(EntryId, SyncSender<Found>)>,
}

impl PgOriginals {
    /// Starts the reader thread for `session` on the server `config` names. It connects
    /// on the first recall (and again after a lost connection), and ends when the
    /// history holding this reader is dropped.
    pub(crate) fn start(
        config: &str,
        session: &str,
        counter: Arc<dyn crate::tokens::counter::TokenCounter>,
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
                    "SELECT seq, body FROM favur_records WHERE session = $1 AND first_id <= $2 AND first_id + ids > $2 ORDER BY first_id DESC LIMIT 1",
                    &[&session, &at],
                )
                .await
                .map_err(|e| e.to_string());
            match row {
                Ok(Some(r)) => {
                    let seq: i64 = r.try_get(0).map_err(|e| e.to_string())?;
                    let body: String = r.try_get(1).map_err(|e| e.to_string())?;
                    Ok(Some((seq, body.into_bytes())))
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
        rows::original(&self.session, id, found, self.counter.as_ref())
    }
}
