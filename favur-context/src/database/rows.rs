//! A session's rows: each one journal record (an `entry`, `batch`, `compaction` or
//! `request_overhead`, the journal's own encoding) keyed by (session, sequence), and
//! their replay with the journal's checks.

use crate::database::StoreError;
use crate::database::sealing::{RowSeal, check_read_back};
use crate::history::RecallError;
use crate::history::view::Compaction;
use crate::history::{History, RecordError, Write};
use crate::journal::{
    Corruption, RecordOut, RequestOverhead, apply_record, find_entry, parse_record,
};
use crate::model::entry::{Entry, EntryId};

/// One row of a session, as written and read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    /// Its place in the session: 0, 1, 2, ...
    pub(crate) seq: i64,
    /// The first id it records (the history's next id before it).
    pub(crate) first_id: i64,
    /// How many ids it takes (entries, or a compaction's summaries).
    pub(crate) ids: i64,
    /// The journal record, as one line of a journal holds it (without the `\n`).
    pub(crate) body: String,
    /// A sealed session's MAC of the row (hex), `None` in an unsealed one.
    pub(crate) mac: Option<String>,
}

impl Row {
    /// The row recording `write` (one entry, a batch, or either under its key) at `seq`.
    pub(crate) fn entries(seq: i64, write: &Write) -> Row {
        let first_id = write.entries.first().map_or(0, |e| e.id.0);
        let record = RecordOut::of(&write.entries, write.key.as_deref());
        Row::of(seq, first_id, write.entries.len(), &record)
    }

    /// The row recording `compaction`, whose `summaries` take the ids from `next` on.
    pub(crate) fn compaction(
        seq: i64,
        next: EntryId,
        summaries: usize,
        compaction: &Compaction,
    ) -> Row {
        Row::of(seq, next.0, summaries, &RecordOut::Compaction(compaction))
    }

    /// The row setting the request overhead to `tokens` at `seq` (it takes no id; `next`
    /// is the history's next id).
    pub(crate) fn overhead(seq: i64, next: EntryId, tokens: u64) -> Row {
        let record = RecordOut::RequestOverhead(RequestOverhead { tokens });
        Row::of(seq, next.0, 0, &record)
    }

    fn of(seq: i64, first_id: u64, ids: usize, record: &RecordOut<'_>) -> Row {
        Row {
            seq,
            first_id: i64::try_from(first_id).unwrap_or(i64::MAX),
            ids: ids as i64,
            // Plain data with string keys: serializing into a String cannot fail.
            body: serde_json::to_string(record).unwrap_or_default(),
            mac: None,
        }
    }
}

/// One row read back: its columns as the database holds them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowIn<'a> {
    pub(crate) seq: i64,
    pub(crate) first_id: i64,
    pub(crate) ids: i64,
    /// The record, as stored (not necessarily UTF-8 or JSON).
    pub(crate) body: &'a [u8],
    /// Its MAC as stored (hex), if any.
    pub(crate) mac: Option<&'a [u8]>,
}

impl Row {
    /// The row as read back.
    pub(crate) fn as_in(&self) -> RowIn<'_> {
        RowIn {
            seq: self.seq,
            first_id: self.first_id,
            ids: self.ids,
            body: self.body.as_bytes(),
            mac: self.mac.as_deref().map(str::as_bytes),
        }
    }
}

/// Replays one row read back into `history`, the row expected at `expected` in
/// `session`: its MAC checked by `seal` first, then the journal's own checks
/// ([`apply_record`]), all of it or an error naming the session and sequence.
pub(crate) fn replay(
    history: &mut History,
    session: &str,
    expected: i64,
    row: RowIn<'_>,
    seal: &mut RowSeal,
) -> Result<(), StoreError> {
    seal.check(session, expected, row.mac, row.body)?;
    let corrupt = |problem: Corruption| StoreError::Corrupt {
        session: session.to_owned(),
        seq: row.seq.max(0) as u64,
        problem,
    };
    if row.seq != expected {
        return Err(StoreError::Sequence {
            session: session.to_owned(),
            expected: expected.max(0) as u64,
            found: row.seq.max(0) as u64,
        });
    }
    let next = history.next_id();
    if u64::try_from(row.first_id).ok() != Some(next.0) {
        return Err(corrupt(Corruption::Record(RecordError::IdOrder {
            expected: next,
            found: EntryId(row.first_id.max(0) as u64),
        })));
    }
    let record = parse_record(row.body).map_err(corrupt)?;
    let taken = apply_record(history, record).map_err(corrupt)?;
    if taken as i64 != row.ids {
        return Err(corrupt(Corruption::InvalidEntry {
            id: Some(next),
            message: format!(
                "the row says it takes {} ids, its record takes {taken}",
                row.ids
            ),
        }));
    }
    Ok(())
}

/// A row read back for an original: its sequence, body, MAC and the MAC of the row before
/// it, as stored.
pub(crate) type Found = (i64, Vec<u8>, Option<Vec<u8>>, Option<Vec<u8>>);

/// The original `id` in the row that holds it, `found` (`None`: no row holds it), read
/// back for the [`Originals`](crate::store::Originals) of a database store: in a sealed session
/// (`sealed` holds the key and chain id) the row's MAC is verified first. The entry is
/// recounted with `counter`, as on replay: a count edited in the row is not believed.
pub(crate) fn original(
    session: &str,
    id: EntryId,
    found: Result<Option<Found>, String>,
    counter: &dyn crate::tokens::counter::TokenCounter,
    sealed: Option<&(std::sync::Arc<crate::store_trait::seal::SealKey>, Vec<u8>)>,
) -> Result<Entry, RecallError> {
    let failed = |message: String| RecallError::Database {
        session: session.to_owned(),
        id,
        message,
    };
    let (seq, body, mac, prev) = found
        .map_err(&failed)?
        .ok_or_else(|| failed("no row holds it".into()))?;
    if let Some(reader) = sealed {
        check_read_back(reader, seq, &body, mac.as_deref(), prev.as_deref()).map_err(&failed)?;
    }
    let record = parse_record(&body)
        .map_err(|problem| failed(format!("the row at sequence {seq} is damaged: {problem}")))?;
    let mut entry = find_entry(record, id)
        .ok_or_else(|| failed(format!("the row at sequence {seq} holds another entry")))?;
    entry.tokens = crate::history::usage::recorded_cost(counter, &entry).0;
    Ok(entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{fuzzy, store::NewEntry};

    fn bad(history: &mut History, row: Row) -> StoreError {
        replay(history, "s", 0, row.as_in(), &mut RowSeal::default()).unwrap_err()
    }

    #[test]
    fn rows_replay_with_the_journals_checks_and_name_the_sequence() {
        let source = History::new();
        let drafted = source.draft_write(vec![
            NewEntry::appended(fuzzy!(user: "a")),
            NewEntry::appended(fuzzy!(user: "b")),
        ]);
        let row = Row::entries(0, &drafted);
        assert!(row.body.starts_with(r#"{"batch":["#));
        let mut h = History::new();
        replay(&mut h, "s", 0, row.as_in(), &mut RowSeal::default()).unwrap();
        assert_eq!(h.len(), 2);
        // The same row again: its ids are taken.
        let again = Row {
            seq: 1,
            ..row.clone()
        };
        let err = replay(&mut h, "s", 1, again.as_in(), &mut RowSeal::default()).unwrap_err();
        assert!(matches!(
            err,
            StoreError::Corrupt {
                seq: 1,
                problem: Corruption::Record(RecordError::IdOrder { .. }),
                ..
            }
        ));
        assert!(matches!(
            bad(
                &mut History::new(),
                Row {
                    seq: 3,
                    ..row.clone()
                }
            ),
            StoreError::Sequence {
                expected: 0,
                found: 3,
                ..
            }
        ));
        let garbage = Row {
            body: "{\"entry\":".into(),
            ..row.clone()
        };
        let err = bad(&mut History::new(), garbage);
        assert!(matches!(
            err,
            StoreError::Corrupt {
                seq: 0,
                problem: Corruption::InvalidJson { .. },
                ..
            }
        ));
        assert!(
            err.to_string()
                .contains("session `s` is damaged at sequence 0")
        );
        let miscounted = Row { ids: 5, ..row };
        assert!(matches!(
            bad(&mut History::new(), miscounted),
            StoreError::Corrupt {
                problem: Corruption::InvalidEntry { .. },
                ..
            }
        ));
    }
}
