//! Any history written in the journal format: [`export_journal`] for a history, and
//! `write_journal` for a database session's rows, so the replay and audit tools read
//! every store.

use std::io::{self, Write};

use super::{Header, JOURNAL_FORMAT, RecordOut, RequestOverhead};
use crate::history::History;
use crate::history::view::Edit;
use crate::model::entry::{Entry, EntryId};
use std::collections::HashMap;

/// Writes `history` to `out` as a journal (format [`JOURNAL_FORMAT`]): the header, each
/// entry as an `entry` record (a `keyed` one for the first entry of a keyed write, so
/// its idempotency key is kept) and each compaction as a `compaction` record, in an order
/// that replays to the same history and view, ids included. Evicted originals are read
/// back ([`History::full_copy`]). A database store exports its own rows exactly with its
/// `export_journal`; the `favur-context replay` and `audit` tools read the result.
///
/// # Errors
///
/// Writing to `out` failed, or an evicted original could not be read back (as
/// [`io::ErrorKind::Other`]).
///
/// ```
/// use favur_context::compact::{Compaction, Edit};
/// use favur_context::journal::export_journal;
/// use favur_context::{fuzzy, strict, History};
/// let mut h = History::new();
/// h.pin(strict!(system: "sys"));
/// let old = h.append(fuzzy!(user: "old"));
/// h.append(fuzzy!(user: "new"));
/// h.apply(Compaction { tier: std::num::NonZeroU8::new(2).unwrap(), edits: vec![Edit::Drop { id: old }], usage_after: None }).unwrap();
/// let mut journal = Vec::new();
/// export_journal(&h, &mut journal)?;
/// let (back, _) = History::from_journal(&journal[..]).unwrap();
/// assert_eq!(back.view(), h.view());
/// assert_eq!(back.len(), 3);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn export_journal(history: &History, mut out: impl Write) -> io::Result<()> {
    let full = history.full_copy().map_err(io::Error::other)?;
    let header = Header {
        format: JOURNAL_FORMAT,
        framing_tokens: full.framing_tokens(),
        counter: Some(full.counter().id().to_owned()),
        seal: None,
    };
    line(&mut out, &RecordOut::Journal(header))?;
    let entries: Vec<&Entry> = full
        .entries()
        .iter()
        .filter(|e| !e.kind.is_summary())
        .collect();
    let keys = full.keys_by_first_id();
    let record = |entry| keyed_or_not(&keys, entry);
    let mut written = 0usize;
    let mut floor = 0u64;
    for compaction in full.compactions() {
        // A compaction is written where its summaries' ids say it was applied (they take
        // the next ids then, above every id it names), or with no summary right after
        // the last entry it names: its edits apply there alike.
        let at = compaction.edits.iter().map(|e| match e {
            Edit::Summarize { summary } => summary.id().0,
            Edit::Drop { id } | Edit::Reform { id, .. } => id.0 + 1,
        });
        let at = at.max().unwrap_or(0).max(floor);
        floor = at;
        while written < entries.len() && entries[written].id.0 < at {
            line(&mut out, &record(entries[written]))?;
            written += 1;
        }
        let compaction = full
            .compaction_in_full(compaction)
            .map_err(io::Error::other)?;
        line(&mut out, &RecordOut::Compaction(&compaction))?;
    }
    for entry in &entries[written..] {
        line(&mut out, &record(entry))?;
    }
    let tokens = full.request_overhead_tokens();
    if tokens != 0 {
        line(
            &mut out,
            &RecordOut::RequestOverhead(RequestOverhead { tokens }),
        )?;
    }
    out.flush()
}

/// The record of `entry`: a `keyed` one if a keyed write starts with it.
fn keyed_or_not<'a>(keys: &HashMap<EntryId, &'a str>, entry: &'a Entry) -> RecordOut<'a> {
    match keys.get(&entry.id) {
        Some(key) => RecordOut::Keyed {
            key,
            entries: std::slice::from_ref(entry),
        },
        None => RecordOut::Entry(entry),
    }
}

/// Writes one record line.
fn line(out: &mut impl Write, record: &RecordOut<'_>) -> io::Result<()> {
    serde_json::to_writer(&mut *out, record).map_err(io::Error::other)?;
    out.write_all(b"\n")
}

/// Writes a journal whose header has `framing` and `counter`, and whose records are
/// `bodies` (each one record line, as a database row holds it).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn write_journal<'a>(
    framing: u32,
    counter: &str,
    bodies: impl IntoIterator<Item = &'a str>,
    seal: Option<&std::sync::Arc<crate::store_trait::seal::SealKey>>,
    mut out: impl Write,
) -> io::Result<()> {
    let id = seal.map(|key| key.fresh_id());
    let mut chain = seal.zip(id.as_deref()).map(|(key, id)| {
        crate::store_trait::seal::Chain::new(
            std::sync::Arc::clone(key),
            &super::sealed::chain_id(id),
            0,
        )
    });
    let header = Header {
        format: JOURNAL_FORMAT,
        framing_tokens: framing,
        counter: Some(counter.to_owned()),
        seal: id.clone(),
    };
    let header = serde_json::to_vec(&RecordOut::Journal(header)).map_err(io::Error::other)?;
    let mut buf = Vec::new();
    let mut emit = |record: &[u8]| {
        buf.clear();
        match &mut chain {
            Some(chain) => {
                let mac = chain.seal(record);
                chain.advance(mac);
                super::sealed::wrap(&mut buf, &mac, record);
            }
            None => buf.extend_from_slice(record),
        }
        buf.push(b'\n');
        out.write_all(&buf)
    };
    emit(&header)?;
    for body in bodies {
        emit(body.as_bytes())?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::view::Compaction;
    use crate::{fuzzy, strict};
    use std::num::NonZeroU8;

    fn drop_one(h: &mut History, id: EntryId) {
        let edits = vec![Edit::Drop { id }];
        h.apply(Compaction {
            tier: NonZeroU8::new(2).unwrap(),
            edits,
            usage_after: None,
        })
        .unwrap();
    }

    #[test]
    fn an_exported_history_replays_to_the_same_view_compactions_in_place() {
        let mut h = History::new();
        h.pin(strict!(system: "sys"));
        let a = h.append(fuzzy!(user: "a"));
        let b = h.append(fuzzy!(user: "b"));
        h.append(fuzzy!(user: "c"));
        drop_one(&mut h, a);
        h.append(fuzzy!(user: "d"));
        drop_one(&mut h, b);
        let mut out = Vec::new();
        export_journal(&h, &mut out).unwrap();
        let (back, report) = History::from_journal(&out[..]).unwrap();
        assert_eq!(report.records, 7);
        assert_eq!(back.view(), h.view());
        assert_eq!(back.compactions(), h.compactions());
        assert_eq!(back.next_id(), EntryId(5));
    }
}
