//! Auditing a journal in the order it was written.

use std::io::Read;

use serde_json::Value;

use crate::history::History;
use crate::journal::{JournalError, OpenOptions, OpenReport};
use crate::model::entry::EntryId;

use super::ledger::Ledger;

impl Ledger {
    /// The ledger of a journal, observed in the order its records were written (so a
    /// compaction that only dropped entries is placed exactly, unlike a saved history
    /// observed at once). The journal is read with [`History::from_journal`] and its
    /// checks; the history it holds is returned too, with the open report.
    ///
    /// # Errors
    ///
    /// What [`History::from_journal`] returns for an unreadable or damaged journal.
    ///
    /// ```
    /// use favur_context::audit::{Ledger, RegretKind};
    /// use favur_context::compact::{Compaction, Edit};
    /// use favur_context::journal::JournaledHistory;
    /// use favur_context::{forgettable, strict, Store};
    /// use serde_json::json;
    /// let path = std::env::temp_dir().join(format!("favur-doc-audit-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let mut j = JournaledHistory::open(&path)?;
    /// for n in 0..2 {
    ///     j.append(strict!(tool_call: "c", "bash", json!({"command": "cargo test"})))?;
    ///     let out = j.append(forgettable!(tool_result("c"): "test parse ... FAILED"))?;
    ///     j.apply(Compaction { tier: std::num::NonZeroU8::new(2).unwrap(), edits: vec![Edit::Drop { id: out }], usage_after: None })?;
    /// }
    /// drop(j);
    /// let (ledger, _history, report) = Ledger::of_journal(std::fs::File::open(&path)?)?;
    /// assert!(report.is_clean());
    /// assert_eq!(ledger.regrets().len(), 1);
    /// assert!(matches!(ledger.regrets()[0].kind, RegretKind::RepeatedCall { .. }));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn of_journal(reader: impl Read) -> Result<(Ledger, History, OpenReport), JournalError> {
        Ledger::of_journal_with(reader, &OpenOptions::new())
    }

    /// [`of_journal`](Ledger::of_journal), the journal read with `options`: a sealed
    /// journal is read with its key ([`OpenOptions::seal_key`]), every record verified.
    ///
    /// # Errors
    ///
    /// What [`OpenOptions::read`] returns: for a sealed journal read without its key,
    /// or with another key, [`JournalError::Tampered`].
    ///
    /// ```
    /// use favur_context::audit::Ledger;
    /// use favur_context::journal::{JournalError, JournaledHistory, OpenOptions};
    /// use favur_context::store::SealKey;
    /// use favur_context::{fuzzy, Store};
    /// let path = std::env::temp_dir().join(format!("favur-doc-audit-sealed-{}.jsonl", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let key = || SealKey::new(b"a key of at least thirty-two bytes!!".to_vec()).unwrap();
    /// let mut j = OpenOptions::new().seal_key(key()).open(&path)?;
    /// j.append(fuzzy!(user: "hi"))?;
    /// drop(j);
    /// let sealed = OpenOptions::new().seal_key(key());
    /// let (ledger, history, _) = Ledger::of_journal_with(std::fs::File::open(&path)?, &sealed)?;
    /// assert_eq!((history.len(), ledger.sites()[0].entries), (1, 1));
    /// let unkeyed = Ledger::of_journal(std::fs::File::open(&path)?);
    /// assert!(matches!(unkeyed, Err(JournalError::Tampered { .. })));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn of_journal_with(
        mut reader: impl Read,
        options: &OpenOptions,
    ) -> Result<(Ledger, History, OpenReport), JournalError> {
        let mut bytes = Vec::new();
        reader
            .read_to_end(&mut bytes)
            .map_err(|source| JournalError::Io {
                path: "<journal>".into(),
                action: "read",
                source,
            })?;
        let (history, report) = options.read(&bytes[..])?;
        let mut ledger = Ledger::new();
        let mut next = 0u64;
        let mut compactions = 0usize;
        // The reader has checked every record; this only needs their order. A torn last
        // line (cut off by the reader) does not parse and is skipped.
        for line in bytes.split(|b| *b == b'\n') {
            let line = crate::journal::record_in_line(line);
            let Ok(Value::Object(record)) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            if record.contains_key("entry") {
                next += 1;
            } else if let Some(c) = record.get("compaction") {
                if compactions >= history.compactions().len() {
                    break;
                }
                ledger.observe_prefix(&history, EntryId(next), compactions);
                let summaries = c.get("edits").and_then(Value::as_array).map_or(0, |edits| {
                    edits
                        .iter()
                        .filter(|e| e.get("summarize").is_some())
                        .count()
                });
                next += summaries as u64;
                compactions += 1;
                ledger.observe_prefix(&history, EntryId(next), compactions);
            }
        }
        ledger.observe(&history);
        Ok((ledger, history, report))
    }
}
