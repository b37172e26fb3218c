//! A history's JSON form: `to_json`, `from_json`, `from_json_with`, serde.

use std::sync::Arc;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::History;
use crate::history::view::{self, Compaction};
use crate::model::entry::{Entry, EntryId};
use crate::tokens::counter::{HeuristicCounter, TokenCounter};

const FORMAT: u32 = 1;

#[derive(Serialize)]
struct HistoryOut<'a> {
    format: u32,
    counter: &'a str,
    framing_tokens: u32,
    #[serde(skip_serializing_if = "is_zero")]
    request_overhead_tokens: u64,
    entries: &'a [Entry],
    compactions: Vec<Compaction>,
}

#[derive(Deserialize)]
struct HistoryIn {
    format: Option<u32>,
    counter: Option<String>,
    framing_tokens: Option<u32>,
    #[serde(default)]
    request_overhead_tokens: u64,
    entries: Vec<serde_json::Value>,
    #[serde(default)]
    compactions: Vec<serde_json::Value>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Serialize for History {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Written with their summaries (the records held name them by id).
        let compactions = self
            .compactions
            .iter()
            .map(|c| self.compaction_in_full(c))
            .collect::<Result<Vec<_>, _>>()
            .map_err(serde::ser::Error::custom)?;
        HistoryOut {
            format: FORMAT,
            counter: self.counter.id(),
            framing_tokens: self.framing,
            request_overhead_tokens: self.overhead,
            entries: &self.entries,
            compactions,
        }
        .serialize(s)
    }
}

/// What to do when a history is reopened with another token counter than the one it was
/// recorded with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterChange {
    /// Refuse to open it with a typed error naming both counters.
    Refuse,
    /// Recount every entry and summary with the new counter.
    Recount,
}

/// Why a serialized history could not be loaded. Nothing is partially loaded.
///
/// ```
/// use favur_context::store::LoadError;
/// use favur_context::History;
/// let err = History::from_json(r#"{"entries":[{"id":0,"tokens":1,"site":{"file":"a.rs","line":1,"column":1},"message":{"role":"user","parts":[]}}]}"#).unwrap_err();
/// assert!(matches!(err, LoadError::Entry { index: 0, .. }));
/// assert!(err.to_string().contains("missing field `retention`"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
    /// The history was counted with another token counter than the one it is loaded
    /// with (see [`CounterChange`]).
    #[error(
        "the history was counted with `{recorded}`, not `{given}`: load it with that counter, or recount it with CounterChange::Recount"
    )]
    Counter {
        /// The id recorded with the history.
        recorded: String,
        /// The id of the counter given.
        given: String,
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

    /// Loads a history from JSON (every token count recounted as its records apply) with the token counter it
    /// was recorded with when that is one of this library's own (the
    /// [`HeuristicCounter`], or with the `tiktoken` or `bpe-openai` feature a
    /// `TiktokenCounter` or `BpeCounter`), so
    /// reopening never silently switches counters. A history recorded with another
    /// counter is refused ([`LoadError::Counter`]): load it with
    /// [`from_json_with`](History::from_json_with).
    ///
    /// ```
    /// use favur_context::store::LoadError;
    /// use favur_context::tokens::TokenCounter;
    /// use favur_context::{strict, History};
    /// let err = History::from_json("{").unwrap_err();
    /// assert!(err.to_string().starts_with("not a valid history document"));
    /// struct Bytes;
    /// impl TokenCounter for Bytes {
    ///     fn id(&self) -> &str { "bytes" }
    ///     fn count_text(&self, t: &str) -> u32 { t.len() as u32 }
    /// }
    /// let mut h = History::with_counter(Bytes);
    /// h.append(strict!(user: "hi"));
    /// let err = History::from_json(&h.to_json()).unwrap_err();
    /// assert!(matches!(err, LoadError::Counter { .. }));
    /// ```
    pub fn from_json(json: &str) -> Result<History, LoadError> {
        let raw = read_document(json)?;
        History::from_raw(raw, None)
    }

    /// Loads a history from JSON with `counter`. If the history was recorded with another
    /// counter (another [`id`](TokenCounter::id)), `on_change` says what to do: refuse
    /// ([`LoadError::Counter`]) or recount every entry and summary with `counter`.
    /// Documents without a recorded counter are taken as they are.
    ///
    /// ```
    /// use favur_context::store::{CounterChange, LoadError};
    /// use favur_context::tokens::TokenCounter;
    /// use favur_context::{fuzzy, History};
    /// struct Bytes;
    /// impl TokenCounter for Bytes {
    ///     fn id(&self) -> &str { "bytes" }
    ///     fn count_text(&self, t: &str) -> u32 { t.len() as u32 }
    /// }
    /// let mut h = History::new();
    /// h.append(fuzzy!(user: "{}", "abcdefgh ".repeat(10)));
    /// let json = h.to_json();
    /// let err = History::from_json_with(&json, Bytes, CounterChange::Refuse).unwrap_err();
    /// assert!(matches!(err, LoadError::Counter { .. }));
    /// let recounted = History::from_json_with(&json, Bytes, CounterChange::Recount).unwrap();
    /// assert_eq!(recounted.entries()[0].tokens(), 90);
    /// assert_eq!(recounted.counter().id(), "bytes");
    /// ```
    pub fn from_json_with(
        json: &str,
        counter: impl TokenCounter + 'static,
        on_change: CounterChange,
    ) -> Result<History, LoadError> {
        let raw = read_document(json)?;
        let counter: Arc<dyn TokenCounter> = Arc::new(counter);
        History::from_raw(raw, Some((counter, on_change)))
    }

    /// Loads `raw` with the counter given, or (`None`) the library counter it names.
    fn from_raw(
        raw: HistoryIn,
        given: Option<(Arc<dyn TokenCounter>, CounterChange)>,
    ) -> Result<History, LoadError> {
        if let Some(found) = raw.format
            && found != FORMAT
        {
            return Err(LoadError::Version { found });
        }
        let mut history = History::new();
        if let Some(f) = raw.framing_tokens {
            history.framing = f;
        }
        history.overhead = raw.request_overhead_tokens;
        let entries = read_entries(raw.entries)?;
        let compactions = read_compactions(raw.compactions)?;
        // The counter, once the document is known to be well formed. Every count is
        // recounted with it as the records apply: a count recorded in the document is
        // never trusted.
        history.counter = load_counter(given, raw.counter)?;
        history.summary_frame = std::sync::OnceLock::new();
        history.replay(entries, compactions)?;
        Ok(history)
    }

    /// Replays `entries` in id order. Each compaction is applied as soon as it is ready:
    /// one that writes summaries when the next id is its first summary's id, one that
    /// writes none once every entry it names exists. The view does not depend on when a
    /// ready compaction is applied, only on the order of compactions.
    fn replay(
        &mut self,
        entries: Vec<Entry>,
        compactions: Vec<Compaction>,
    ) -> Result<(), LoadError> {
        let mut pending = compactions.into_iter().enumerate().peekable();
        for (index, entry) in entries.into_iter().enumerate() {
            if entry.id.0 != index as u64 {
                return Err(LoadError::IdOrder {
                    index,
                    found: entry.id,
                });
            }
            self.apply_ready(&mut pending)?;
            let written = (index as u64) < self.next_id().0;
            let problem = match (written, entry.kind.is_summary()) {
                (true, true) => continue,
                (false, false) => {
                    let e_id = entry.id;
                    self.insert(entry).map_err(|e| LoadError::Entry {
                        index,
                        id: Some(e_id),
                        problem: e.to_string(),
                    })?;
                    continue;
                }
                (true, false) => {
                    "a compaction wrote a summary with this id, but the entry is not a summary"
                }
                (false, true) => "summary entry not written by any compaction",
            };
            return Err(LoadError::Entry {
                index,
                id: Some(entry.id),
                problem: problem.into(),
            });
        }
        self.apply_ready(&mut pending)?;
        if let Some((index, _)) = pending.next() {
            return Err(LoadError::Compaction {
                index,
                problem: "names entries or summary ids that do not exist in the document".into(),
            });
        }
        Ok(())
    }

    /// Applies the pending compactions that are ready now, in order.
    fn apply_ready(&mut self, pending: &mut Pending) -> Result<(), LoadError> {
        while let Some((ci, c)) = pending.next_if(|(_, c)| ready(c, self.next_id())) {
            self.apply(c).map_err(|e| LoadError::Compaction {
                index: ci,
                problem: e.to_string(),
            })?;
        }
        Ok(())
    }
}

/// Compactions not yet applied, with their index in the document.
type Pending = std::iter::Peekable<std::iter::Enumerate<std::vec::IntoIter<Compaction>>>;

/// The document's entries, each well formed.
fn read_entries(raw: Vec<serde_json::Value>) -> Result<Vec<Entry>, LoadError> {
    let mut entries = Vec::with_capacity(raw.len());
    for (index, value) in raw.into_iter().enumerate() {
        let id = value.get("id").and_then(|v| v.as_u64()).map(EntryId);
        let entry: Entry = serde_json::from_value(value).map_err(|e| LoadError::Entry {
            index,
            id,
            problem: e.to_string(),
        })?;
        entries.push(entry);
    }
    Ok(entries)
}

/// The document's compactions, each well formed.
fn read_compactions(raw: Vec<serde_json::Value>) -> Result<Vec<Compaction>, LoadError> {
    raw.into_iter()
        .enumerate()
        .map(|(index, v)| {
            serde_json::from_value::<Compaction>(v).map_err(|e| LoadError::Compaction {
                index,
                problem: e.to_string(),
            })
        })
        .collect()
}

/// The counter to load with: the one given (if the document names another, only when
/// told to recount), or the library counter the document names (the heuristic one if
/// it names none).
fn load_counter(
    given: Option<(Arc<dyn TokenCounter>, CounterChange)>,
    recorded: Option<String>,
) -> Result<Arc<dyn TokenCounter>, LoadError> {
    Ok(match (given, &recorded) {
        (Some((c, _)), None) => c,
        (Some((c, _)), Some(r)) if r == c.id() => c,
        (Some((c, CounterChange::Recount)), Some(_)) => c,
        (Some((c, CounterChange::Refuse)), Some(r)) => {
            return Err(LoadError::Counter {
                recorded: r.clone(),
                given: c.id().to_owned(),
            });
        }
        (None, None) => Arc::new(HeuristicCounter) as Arc<dyn TokenCounter>,
        (None, Some(r)) => match crate::tokens::builtin_counter(r) {
            Some(c) => c,
            None => {
                return Err(LoadError::Counter {
                    recorded: r.clone(),
                    given: HeuristicCounter.id().to_owned(),
                });
            }
        },
    })
}

/// The document, refused if any object in it holds a key twice.
fn read_document(json: &str) -> Result<HistoryIn, LoadError> {
    crate::json_keys::check(json.as_bytes()).map_err(|d| LoadError::Document(d.to_string()))?;
    serde_json::from_str(json).map_err(|e| LoadError::Document(e.to_string()))
}

/// Whether a compaction can be applied when the next id is `next`.
fn ready(c: &Compaction, next: EntryId) -> bool {
    let first_summary = c.edits.iter().find_map(|e| match e {
        view::Edit::Summarize { summary } => Some(summary.id()),
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
        // As `from_json`: the library counter the document names; another is refused.
        History::from_raw(raw, None).map_err(D::Error::custom)
    }
}
