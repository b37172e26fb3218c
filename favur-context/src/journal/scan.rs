//! Reading a journal: every line replayed into a history, up to the end, a torn last
//! line, or the first damaged line.

use std::io::{BufRead, Read};
use std::path::Path;

use super::error::{Corruption, JournalError};
use super::format::{LineError, RecordIn, diagnose, header};
use super::options::{OpenOptions, TornTail};
use super::readback::Locator;
use super::sealed::{Reading, SEALED_START};
use crate::history::History;
use crate::history::RecordError;
use crate::model::entry::{Entry, EntryId};

/// A damaged line found while reading.
pub(super) struct Damage {
    pub(super) line: u64,
    pub(super) offset: u64,
    pub(super) problem: Corruption,
}

impl Damage {
    pub(super) fn into_error(self, path: &Path) -> JournalError {
        JournalError::Corrupt {
            path: path.to_path_buf(),
            line: self.line,
            offset: self.offset,
            problem: self.problem,
        }
    }
}

/// What reading a journal gave.
pub(super) struct Scan {
    pub(super) history: History,
    /// Where each id's record is, indexed by id.
    pub(super) locators: Vec<Locator>,
    /// End of the last good record.
    pub(super) end: u64,
    pub(super) header: bool,
    pub(super) records: u64,
    pub(super) torn: Option<TornTail>,
    pub(super) damage: Option<Damage>,
    /// The last record is complete but lacks its `\n` (kept: the opener writes it).
    pub(super) unterminated: bool,
    /// A sealed journal's chain, as far as it was verified.
    pub(super) seal: Reading,
}

/// What every journal starts with (a torn first line that is a prefix of it is a header
/// whose write was cut; anything else is not a journal).
const HEADER_START: &[u8] = b"{\"journal\":";

/// Whether a first line cut before its `\n` may be a journal header whose write was cut:
/// it starts with the whole of [`HEADER_START`]. Anything shorter (a lone `{`, say) is
/// not taken for a journal, so it is refused, never overwritten: the header is one short
/// write, and a file that does not even say `{"journal":` may be anyone's.
fn may_be_header(torn: &[u8]) -> bool {
    torn.starts_with(HEADER_START) || torn.starts_with(SEALED_START)
}

/// Where a line read is in the file.
#[derive(Clone, Copy)]
struct LineAt {
    /// The line number, from 1.
    number: u64,
    /// Byte offset of its start.
    offset: u64,
    /// Its length read, `\n` included.
    bytes: u64,
}

/// Reads a journal, replaying every record into a history, until the end, a torn last
/// line or the first damaged line.
///
/// `history` is the empty history to replay into (with an originals reader when the
/// originals that leave the view are to be evicted as they are read).
pub(super) fn scan<R: BufRead>(
    mut reader: R,
    path: &Path,
    options: &OpenOptions,
    history: History,
) -> Result<Scan, JournalError> {
    let mut scan = Scan::new(history, options);
    let limit = options.max_line_bytes as u64 + 1; // the content and its `\n`
    let mut buf = Vec::with_capacity(4096);
    let mut number = 0u64;
    loop {
        buf.clear();
        let n = read_until_newline(&mut reader, limit, &mut buf, path)?;
        if n == 0 {
            break;
        }
        number += 1;
        let at = LineAt {
            number,
            offset: scan.end,
            bytes: n as u64,
        };
        let (content, unterminated) = match buf.strip_suffix(b"\n") {
            Some(content) => (content, false),
            None if at.bytes == limit => {
                let limit = options.max_line_bytes;
                scan.damaged(at, Corruption::LineTooLong { limit });
                break;
            }
            None => (&buf[..], true),
        };
        if !scan.take(content, unterminated, at, path)? {
            break;
        }
    }
    Ok(scan)
}

/// Reads a line into `buf`, at most `limit` bytes of it: how many bytes were read (0 at
/// the end).
fn read_until_newline<R: BufRead>(
    reader: &mut R,
    limit: u64,
    buf: &mut Vec<u8>,
    path: &Path,
) -> Result<usize, JournalError> {
    reader
        .by_ref()
        .take(limit)
        .read_until(b'\n', buf)
        .map_err(|source| JournalError::Io {
            path: path.to_path_buf(),
            action: "read",
            source,
        })
}

impl Scan {
    /// Nothing read yet into `history`.
    fn new(history: History, options: &OpenOptions) -> Scan {
        Scan {
            history,
            locators: Vec::new(),
            end: 0,
            header: false,
            records: 0,
            torn: None,
            damage: None,
            unterminated: false,
            seal: Reading {
                key: options.seal.clone(),
                ..Reading::default()
            },
        }
    }

    /// Takes one line (`content`, without its `\n`): replayed, or the torn tail or the
    /// damage it is, or the error that refuses the whole journal. Returns whether
    /// reading goes on.
    fn take(
        &mut self,
        content: &[u8],
        unterminated: bool,
        at: LineAt,
        path: &Path,
    ) -> Result<bool, JournalError> {
        let locator = Locator {
            offset: at.offset,
            // A kept unterminated record gets its `\n` when the journal is opened.
            len: at.bytes as u32 + u32::from(unterminated),
        };
        match read_line(self, content, locator) {
            Ok(()) => {
                self.end += at.bytes;
                // A complete record whose `\n` never reached the file: kept, and the last.
                self.unterminated = unterminated;
                Ok(!unterminated)
            }
            Err(LineError::Corrupt(_))
                if unterminated && (self.header || may_be_header(content)) =>
            {
                // Torn mid-write: that append was never acknowledged.
                self.torn = Some(TornTail {
                    line: at.number,
                    offset: at.offset,
                    bytes: at.bytes,
                });
                Ok(false)
            }
            Err(LineError::Corrupt(problem)) => {
                // Not a journal at all if its first line is not a header, cut or not.
                let problem = match unterminated {
                    true => Corruption::MissingHeader,
                    false => problem,
                };
                self.damaged(at, problem);
                Ok(false)
            }
            Err(LineError::Version(found)) => Err(JournalError::Version {
                path: path.to_path_buf(),
                found,
            }),
            Err(LineError::Tampered(problem)) => Err(JournalError::Tampered {
                path: path.to_path_buf(),
                line: at.number,
                seq: at.number - 1,
                problem,
            }),
            Err(LineError::Counter(recorded)) => Err(JournalError::Counter {
                path: path.to_path_buf(),
                given: self.history.counter().id().to_owned(),
                recorded,
            }),
        }
    }

    /// Notes the damaged line reading stops at.
    fn damaged(&mut self, at: LineAt, problem: Corruption) {
        self.damage = Some(Damage {
            line: at.number,
            offset: at.offset,
            problem,
        });
    }
}

/// Reads one line: the header first, then records, each all or nothing.
fn read_line(scan: &mut Scan, content: &[u8], at: Locator) -> Result<(), LineError> {
    if scan.header {
        let (record, mac) = scan.seal.record(content)?;
        replay(scan, record, at)?;
        scan.seal.commit(at.offset, mac);
        return Ok(());
    }
    let content = scan.seal.header(content)?;
    let (framing, counter) = header(content)?;
    scan.seal.header_done()?;
    if let Some(recorded) = counter
        && recorded != scan.history.counter().id()
    {
        return Err(LineError::Counter(recorded));
    }
    let framing = crate::history::usage::checked_framing(i64::from(framing))
        .map_err(|message| Corruption::InvalidHeader { message })?;
    scan.history = std::mem::take(&mut scan.history).with_framing_tokens(framing);
    scan.header = true;
    scan.seal.note_header();
    Ok(())
}

/// Replays one record line into the history: all of it, or nothing and the damage.
fn replay(scan: &mut Scan, content: &[u8], at: Locator) -> Result<(), LineError> {
    let record = parse_record(content)?;
    let ids = apply_record(&mut scan.history, record)?;
    scan.locators.extend(std::iter::repeat_n(at, ids));
    scan.records += 1;
    Ok(())
}

/// Parses one record (a journal line without its `\n`, or a store's row body), saying
/// what is wrong with one that does not parse.
pub(crate) fn parse_record(content: &[u8]) -> Result<RecordIn, Corruption> {
    serde_json::from_slice(content).map_err(|e| diagnose(content, &e))
}

/// Applies one record read back (a journal line, a store's row) to `history` with its own
/// checks ([`History::insert`], [`History::check`]): all of it, or nothing and what is
/// wrong. Returns how many ids it took.
pub(crate) fn apply_record(history: &mut History, record: RecordIn) -> Result<usize, Corruption> {
    match record {
        RecordIn::Journal(_) => Err(Corruption::UnexpectedHeader),
        RecordIn::Entry(entry) => {
            history.insert(entry)?;
            Ok(1)
        }
        RecordIn::Batch(entries) => apply_entries(history, entries),
        RecordIn::Keyed { key, entries } => {
            history
                .admits_key(&key)
                .map_err(|e| Corruption::Record(e.into()))?;
            let first = history.next_id();
            let n = apply_entries(history, entries)?;
            history.note_key(&key, first);
            Ok(n)
        }
        RecordIn::Compaction(compaction) => {
            let checked = history.check(compaction)?;
            let n = checked.summaries();
            history.commit(checked)?;
            Ok(n)
        }
        RecordIn::RequestOverhead(overhead) => {
            history.set_request_overhead_tokens(overhead.tokens);
            Ok(0)
        }
    }
}

/// Applies the entries of one batch record: every one checked before any is recorded.
fn apply_entries(history: &mut History, entries: Vec<Entry>) -> Result<usize, Corruption> {
    if entries.is_empty() {
        return Err(Corruption::EmptyBatch);
    }
    for (i, entry) in entries.iter().enumerate() {
        let expected = EntryId(history.next_id().0.saturating_add(i as u64));
        if entry.id != expected {
            return Err(RecordError::IdOrder {
                expected,
                found: entry.id,
            }
            .into());
        }
        if entry.kind.is_summary() {
            return Err(RecordError::Summary { id: entry.id }.into());
        }
    }
    history.admits_all(&entries)?;
    let n = entries.len();
    for entry in entries {
        history.insert(entry)?;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::super::{Corruption, JournalError, OpenOptions};

    #[test]
    fn a_zero_line_limit_refuses_every_line() {
        let err = OpenOptions::new()
            .max_line_bytes(0)
            .read(&b"{\"journal\":{\"format\":1,\"framing_tokens\":4}}\n"[..])
            .unwrap_err();
        assert!(matches!(
            err,
            JournalError::Corrupt {
                line: 1,
                offset: 0,
                problem: Corruption::LineTooLong { limit: 0 },
                ..
            }
        ));
    }
}
