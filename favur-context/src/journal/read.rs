//! A journal read from any reader, without a lock ([`OpenOptions::read`],
//! [`History::from_journal`]).

use std::io::{BufReader, Read};
use std::path::Path;

use super::error::JournalError;
use super::options::{OpenOptions, OpenReport, Salvaged};
use super::scan::scan;
use crate::history::History;

impl OpenOptions {
    /// Reads a journal from any reader into a [`History`] holding every original, without
    /// a lock and without changing anything: to inspect a journal (even one a writer has
    /// open) or a copy of one. A torn last line is left out and reported; with
    /// [`salvage`](OpenOptions::salvage), damage ends the read and is reported.
    ///
    /// ```
    /// use favur_context::journal::OpenOptions;
    /// let text = "{\"journal\":{\"format\":1,\"framing_tokens\":4}}\n{\"entry\":{\"id\":0,\"retention\":\"fuzzy\",\"tokens\":1,\"site\":{\"file\":\"a.rs\",\"line\":1,\"column\":1},\"message\":{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"hi\"}]}}}\n";
    /// let (history, report) = OpenOptions::new().read(text.as_bytes())?;
    /// assert_eq!(history.len(), 1);
    /// assert_eq!(report.records, 1);
    /// # Ok::<(), favur_context::journal::JournalError>(())
    /// ```
    pub fn read(&self, reader: impl Read) -> Result<(History, OpenReport), JournalError> {
        let path = Path::new("(reader)");
        let scan = scan(BufReader::new(reader), path, self, self.new_history())?;
        let mut report = OpenReport {
            created: false,
            records: scan.records,
            torn_tail: scan.torn,
            salvaged: None,
            seal_head: scan.seal.chain.as_ref().and_then(|c| c.head(0)),
        };
        if let Some(damage) = scan.damage {
            if !self.salvage {
                return Err(damage.into_error(path));
            }
            report.salvaged = Some(Salvaged {
                line: damage.line,
                offset: damage.offset,
                problem: damage.problem,
                moved_to: None,
                bytes: 0,
            });
        }
        Ok((scan.history, report))
    }
}

impl History {
    /// Reads a journal (see [`JournaledHistory`](crate::journal::JournaledHistory)) into a history holding every original,
    /// with the default [`OpenOptions`]: shorthand for `OpenOptions::new().read(reader)`.
    ///
    /// ```
    /// use favur_context::journal::JournalError;
    /// use favur_context::History;
    /// let err = History::from_journal("{\"journal\":{\"format\":2,\"framing_tokens\":4}}\n".as_bytes()).unwrap_err();
    /// assert!(matches!(err, JournalError::Version { found: 2, .. }));
    /// ```
    pub fn from_journal(reader: impl Read) -> Result<(History, OpenReport), JournalError> {
        OpenOptions::new().read(reader)
    }
}
