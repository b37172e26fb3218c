//! A journal read for import into a database session: its records checked by the journal's
//! own reader and turned into rows.

use std::io::Read;
use std::path::PathBuf;

use super::StoreError;
use super::rows::Row;
use super::session::SessionOptions;
use crate::journal::{Corruption, JournalError, apply_record, parse_record};

/// Reads a journal with the journal's own reader (versions, counter, damage: then
/// nothing is imported; a torn last line, never acknowledged, is left out), then
/// turns each of its records into a row; the rows, and `options` with the journal's
/// framing tokens (for the new session).
pub(crate) fn read_journal(
    mut reader: impl Read,
    options: &SessionOptions,
) -> Result<(Vec<Row>, SessionOptions), StoreError> {
    let path = || PathBuf::from("(import)");
    let mut text = Vec::new();
    reader
        .read_to_end(&mut text)
        .map_err(|source| JournalError::Io {
            path: path(),
            action: "read",
            source,
        })?;
    // A sealed journal is verified with the key; an unsealed one is taken as it is, and
    // sealed on import when a key is given (the explicit conversion).
    let mut history_options = options.history.clone();
    if !crate::journal::is_sealed(&text) {
        history_options.seal = None;
    }
    let (read, _) = history_options.read(&text[..])?;
    let framing = read.framing_tokens();
    let mut history = options.new_history(framing);
    let complete = text
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(&[][..], |end| &text[..end]);
    let mut rows = Vec::new();
    let mut offset = 0u64;
    for (i, line) in complete.split(|&b| b == b'\n').enumerate() {
        let at = offset;
        offset += line.len() as u64 + 1;
        if i == 0 {
            continue; // the header, read above
        }
        let corrupt = |problem: Corruption| JournalError::Corrupt {
            path: path(),
            line: i as u64 + 1,
            offset: at,
            problem,
        };
        let next = history.next_id();
        let line = crate::journal::record_in_line(line);
        let record = parse_record(line).map_err(corrupt)?;
        let ids = apply_record(&mut history, record).map_err(corrupt)?;
        // Valid UTF-8: it parsed as JSON.
        let body = String::from_utf8_lossy(line).into_owned();
        rows.push(Row {
            seq: rows.len() as i64,
            first_id: i64::try_from(next.0).unwrap_or(i64::MAX),
            ids: ids as i64,
            body,
            mac: None,
        });
    }
    Ok((rows, options.with_framing(framing)))
}
