//! A history as one JSON document: [`History::to_json`] and [`History::from_json`].

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::History;
use crate::entry::{Entry, EntryId};
use crate::view::{self, Compaction};

const FORMAT: u32 = 1;

#[derive(Serialize)]
struct HistoryOut<'a> {
    format: u32,
    framing_tokens: u32,
    entries: &'a [Entry],
    compactions: &'a [Compaction],
}

#[derive(Deserialize)]
struct HistoryIn {
    format: Option<u32>,
    framing_tokens: Option<u32>,
    entries: Vec<serde_json::Value>,
    #[serde(default)]
    compactions: Vec<serde_json::Value>,
}

impl Serialize for History {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        HistoryOut {
            format: FORMAT,
            framing_tokens: self.framing,
            entries: &self.entries,
            compactions: &self.compactions,
        }
        .serialize(s)
    }
}

/// Why a serialized history could not be loaded. Nothing is partially loaded.
///
/// ```
/// use favur_context::{History, LoadError};
/// let err = History::from_json(r#"{"entries":[{"id":0,"tokens":1,"site":{"file":"a.rs","line":1,"column":1},"message":{"role":"user","parts":[]}}]}"#).unwrap_err();
/// assert!(matches!(err, LoadError::Entry { index: 0, .. }));
/// assert!(err.to_string().contains("missing field `retention`"));
/// ```
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The text is not a history document at all.
    #[error("not a valid history document: {0}")]
    Document(String),
    /// The document declares a format version this library does not know.
    #[error(
        "history format version {found} is not supported (this library reads version {FORMAT})"
    )]
    Version {
        /// The version found.
        found: u32,
    },
    /// One entry is malformed (missing or unknown class, bad message, ...).
    #[error("entry {index}{}: {problem}", id.map(|i| format!(" (id {i})")).unwrap_or_default())]
    Entry {
        /// Position of the entry in the document.
        index: usize,
        /// Its id, when it could be read.
        id: Option<EntryId>,
        /// What is wrong.
        problem: String,
    },
    /// An entry's id is not its position (ids are dense and ordered).
    #[error("entry {index} has id {found}, expected {}", EntryId(*index as u64))]
    IdOrder {
        /// Position of the entry.
        index: usize,
        /// The id found.
        found: EntryId,
    },
    /// A compaction record is malformed or does not apply.
    #[error("compaction {index}: {problem}")]
    Compaction {
        /// Position of the compaction in the document.
        index: usize,
        /// What is wrong.
        problem: String,
    },
}

impl History {
    /// Serializes the history (entries, compactions, settings) to JSON.
    ///
    /// It writes the entries held in memory: all of them for a `History` on its own. For
    /// a journaled history whose originals were evicted, first get a complete copy with
    /// [`full_copy`](History::full_copy).
    ///
    /// ```
    /// use favur_context::{strict, History};
    /// let mut h = History::new();
    /// h.append(strict!(user: "keep"));
    /// let json = h.to_json();
    /// let back = History::from_json(&json).unwrap();
    /// assert_eq!(back.entries(), h.entries());
    /// ```
    pub fn to_json(&self) -> String {
        // Serializing plain data with string keys cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Loads a history from JSON (with the default counter; recorded counts are kept).
    ///
    /// ```
    /// let err = favur_context::History::from_json("{").unwrap_err();
    /// assert!(err.to_string().starts_with("not a valid history document"));
    /// ```
    pub fn from_json(json: &str) -> Result<History, LoadError> {
        let raw: HistoryIn =
            serde_json::from_str(json).map_err(|e| LoadError::Document(e.to_string()))?;
        History::from_raw(raw)
    }

    fn from_raw(raw: HistoryIn) -> Result<History, LoadError> {
        if let Some(found) = raw.format
            && found != FORMAT
        {
            return Err(LoadError::Version { found });
        }
        let mut history = History::new();
        if let Some(f) = raw.framing_tokens {
            history.framing = f;
        }
        let mut entries = Vec::with_capacity(raw.entries.len());
        for (index, value) in raw.entries.into_iter().enumerate() {
            let id = value.get("id").and_then(|v| v.as_u64()).map(EntryId);
            let entry: Entry = serde_json::from_value(value).map_err(|e| LoadError::Entry {
                index,
                id,
                problem: e.to_string(),
            })?;
            entries.push(entry);
        }
        let compactions = raw
            .compactions
            .into_iter()
            .enumerate()
            .map(|(index, v)| {
                serde_json::from_value::<Compaction>(v).map_err(|e| LoadError::Compaction {
                    index,
                    problem: e.to_string(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        // Replay in id order. Each compaction is applied as soon as it is ready: one that
        // writes summaries when the next id is its first summary's id, one that writes
        // none once every entry it names exists. The view does not depend on when a
        // ready compaction is applied, only on the order of compactions.
        let mut pending = compactions.into_iter().enumerate().peekable();
        for (index, entry) in entries.into_iter().enumerate() {
            if entry.id.0 != index as u64 {
                return Err(LoadError::IdOrder {
                    index,
                    found: entry.id,
                });
            }
            while let Some((ci, c)) = pending.next_if(|(_, c)| ready(c, history.next_id())) {
                history.apply(c).map_err(|e| LoadError::Compaction {
                    index: ci,
                    problem: e.to_string(),
                })?;
            }
            let written = (index as u64) < history.next_id().0;
            let e_id = entry.id;
            match (written, entry.kind.is_summary()) {
                (true, true) => continue,
                (false, false) => history.insert(entry).map_err(|e| LoadError::Entry {
                    index,
                    id: Some(e_id),
                    problem: e.to_string(),
                })?,
                (true, false) => {
                    return Err(LoadError::Entry {
                        index,
                        id: Some(entry.id),
                        problem: "a compaction wrote a summary with this id, but the entry is not a summary".into(),
                    });
                }
                (false, true) => {
                    return Err(LoadError::Entry {
                        index,
                        id: Some(entry.id),
                        problem: "summary entry not written by any compaction".into(),
                    });
                }
            }
        }
        while let Some((ci, c)) = pending.next_if(|(_, c)| ready(c, history.next_id())) {
            history.apply(c).map_err(|e| LoadError::Compaction {
                index: ci,
                problem: e.to_string(),
            })?;
        }
        if let Some((index, _)) = pending.next() {
            return Err(LoadError::Compaction {
                index,
                problem: "names entries or summary ids that do not exist in the document".into(),
            });
        }
        Ok(history)
    }
}

/// Whether a compaction can be applied when the next id is `next`.
fn ready(c: &Compaction, next: EntryId) -> bool {
    let first_summary = c.edits.iter().find_map(|e| match e {
        view::Edit::Summarize { summary } => Some(summary.id),
        _ => None,
    });
    match first_summary {
        Some(s) => s == next,
        None => c.edits.iter().all(|e| match e {
            view::Edit::Drop { id } | view::Edit::Reform { id, .. } => *id < next,
            view::Edit::Summarize { .. } => false,
        }),
    }
}

impl<'de> Deserialize<'de> for History {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = HistoryIn::deserialize(d)?;
        History::from_raw(raw).map_err(D::Error::custom)
    }
}
