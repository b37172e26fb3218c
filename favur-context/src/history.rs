//! The history: every entry ever recorded, the pinned entries, and the current view.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::account::{HeuristicCounter, TokenCounter};
use crate::classify::{Classified, Classify};
use crate::entry::{Entry, EntryId, EntryKind};
use crate::forms;
use crate::message::{Arguments, Message, Role, ToolCall};
use crate::site::CallSite;
use crate::tool::ClassifiedTool;
use crate::view::{self, ApplyError, Compaction, Form, Shape, View, ViewItem};

/// Tokens each message costs in a request beyond its content (role markers, separators).
pub const DEFAULT_FRAMING_TOKENS: u32 = 4;

/// The conversation history of one agent job.
///
/// Every entry is classified: [`append`](History::append) accepts only values that carry a
/// retention class, so `history.append("text")` does not compile. Entries are never edited
/// or removed; compaction changes only the [`View`] the model is shown.
///
/// `History` is `Send + Sync`: hold it across `.await` points or share it behind a lock.
///
/// ```
/// use favur_context::{forgettable, strict, History, Retention};
///
/// let mut history = History::new();
/// history.append(strict!(user: "Fix the failing test in {}", "src/parse.rs"));
/// history.append(forgettable!(tool_result("call_1"): "Cargo.toml\nsrc/\ntests/"));
/// assert_eq!(history.len(), 2);
/// assert_eq!(history.entries()[0].retention(), Retention::Strict);
/// assert!(history.usage_tokens() > 0);
/// ```
///
/// An unclassified append is a compile error:
///
/// ```compile_fail
/// let mut history = favur_context::History::new();
/// history.append("some text"); // error: `&str` has no retention class
/// ```
#[derive(Clone)]
pub struct History {
    /// The originals held in memory, in id order. Without a journal that is every entry,
    /// so an entry's index is its id; a [`JournaledHistory`](crate::JournaledHistory)
    /// evicts originals that left the view (they stay in its file).
    entries: Vec<Entry>,
    /// Ids assigned so far (the next id), whether their originals are held or not.
    next: u64,
    /// The entries holding a result for each tool-call id, in id order: small metadata
    /// kept for every entry, held or evicted, so renderers can point at a result that
    /// left the view.
    results: HashMap<String, Vec<EntryId>>,
    pinned: Vec<EntryId>,
    pinned_tokens: u64,
    pinned_blocks: u64,
    view: View,
    /// What rendering adds while repairing the pairing of the view, kept up to date.
    repairs: forms::Repairs,
    compactions: Vec<Compaction>,
    counter: Arc<dyn TokenCounter>,
    framing: u32,
}

impl fmt::Debug for History {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("History")
            .field("entries", &self.next)
            .field("held", &self.entries.len())
            .field("pinned", &self.pinned)
            .field("view", &self.view.len())
            .field("compactions", &self.compactions.len())
            .field("framing", &self.framing)
            .finish()
    }
}

// `History` must stay `Send + Sync` (held across `.await`, shared behind a lock): this
// fails to compile if a field ever breaks it.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<History>();
};

impl Default for History {
    fn default() -> Self {
        History::new()
    }
}

impl History {
    /// An empty history with the [`HeuristicCounter`] and
    /// [`DEFAULT_FRAMING_TOKENS`] per message.
    ///
    /// ```
    /// assert!(favur_context::History::new().is_empty());
    /// ```
    pub fn new() -> Self {
        History::with_counter(HeuristicCounter)
    }

    /// An empty history that counts tokens with `counter`.
    ///
    /// ```
    /// use favur_context::{fuzzy, History, TokenCounter};
    /// struct Bytes;
    /// impl TokenCounter for Bytes {
    ///     fn count_text(&self, t: &str) -> u32 { t.len() as u32 }
    /// }
    /// let mut h = History::with_counter(Bytes);
    /// let id = h.append(fuzzy!(user: "abcd"));
    /// assert_eq!(h.entry(id).unwrap().tokens(), 4);
    /// ```
    pub fn with_counter(counter: impl TokenCounter + 'static) -> Self {
        History {
            entries: Vec::new(),
            next: 0,
            results: HashMap::new(),
            pinned: Vec::new(),
            pinned_tokens: 0,
            pinned_blocks: 0,
            view: View::default(),
            repairs: forms::Repairs::default(),
            compactions: Vec::new(),
            counter: Arc::new(counter),
            framing: DEFAULT_FRAMING_TOKENS,
        }
    }

    /// Sets the per-message framing tokens counted in usage (default
    /// [`DEFAULT_FRAMING_TOKENS`]).
    ///
    /// ```
    /// let h = favur_context::History::new().with_framing_tokens(0);
    /// assert_eq!(h.framing_tokens(), 0);
    /// ```
    pub fn with_framing_tokens(mut self, framing: u32) -> Self {
        self.framing = framing;
        self
    }

    /// Replaces the token counter. Counts already recorded are kept as they are.
    ///
    /// ```
    /// let h = favur_context::History::new().with_token_counter(favur_context::HeuristicCounter);
    /// assert!(h.is_empty());
    /// ```
    pub fn with_token_counter(mut self, counter: impl TokenCounter + 'static) -> Self {
        self.counter = Arc::new(counter);
        self
    }

    /// The per-message framing tokens.
    ///
    /// ```
    /// assert_eq!(favur_context::History::new().framing_tokens(), favur_context::DEFAULT_FRAMING_TOKENS);
    /// ```
    pub fn framing_tokens(&self) -> u32 {
        self.framing
    }

    /// The token counter in use.
    ///
    /// ```
    /// assert_eq!(favur_context::History::new().counter().count_text(""), 0);
    /// ```
    pub fn counter(&self) -> &dyn TokenCounter {
        &*self.counter
    }

    /// Appends a classified value and returns its id. Its tokens are counted once, here.
    ///
    /// Only values that carry a retention class are accepted: [`Classified`] (from the
    /// macros or [`Message::classify`]) and types marked `#[retention(...)]`. The call site
    /// recorded is the macro's, or this call's for a value classified by its type.
    ///
    /// ```
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// let a = h.append(fuzzy!(user: "a"));
    /// let b = h.append(fuzzy!(assistant: "b"));
    /// assert!(a < b);
    /// ```
    #[track_caller]
    pub fn append<M: Classify>(&mut self, message: M) -> EntryId {
        let classified = message.into_classified(CallSite::caller());
        self.record(classified, EntryKind::Appended)
    }

    /// Pins a classified message (a system prompt, the task): it is sent verbatim in every
    /// request and never compacted, and counted once. A system-role pin goes to the system
    /// messages (OpenAI) / the `system` parameter (Anthropic); a pin of any other role
    /// stays in the view where it was recorded (moving it to the top would rewrite the
    /// cached prefix), a fixed point the planner never summarizes, drops or reshapes.
    ///
    /// ```
    /// use favur_context::{fuzzy, strict, History};
    /// let mut h = History::new();
    /// let id = h.pin(strict!(system: "You are a careful coding agent."));
    /// assert_eq!(h.pinned(), &[id]);
    /// assert!(h.view().is_empty());
    /// assert!(h.usage_tokens() > 0);
    /// h.append(fuzzy!(user: "hello"));
    /// let task = h.pin(strict!(user: "the task"));
    /// assert_eq!(h.view().items()[1].id, task); // in place
    /// assert!(h.view().items()[1].is_pinned());
    /// ```
    #[track_caller]
    pub fn pin<M: Classify>(&mut self, message: M) -> EntryId {
        let classified = message.into_classified(CallSite::caller());
        self.record(classified, EntryKind::Pinned)
    }

    /// Appends the result of `tool`'s call `call_id`, classified with the tool's own class.
    /// `Err` output is recorded as an error result.
    ///
    /// ```
    /// use favur_context::{retention, History, Retention, Tool};
    /// struct Grep;
    /// #[retention(forgettable)]
    /// impl Tool for Grep {
    ///     fn name(&self) -> &str { "grep" }
    ///     fn description(&self) -> &str { "Search files" }
    ///     fn parameters(&self) -> serde_json::Value { serde_json::json!({}) }
    ///     fn call(&self, _: &serde_json::Value) -> Result<String, String> { Ok("a.rs:3: fn main".into()) }
    /// }
    /// let mut h = History::new();
    /// let id = h.append_tool_result(&Grep, "call_7", Ok("a.rs:3: fn main".into()));
    /// assert_eq!(h.entry(id).unwrap().retention(), Retention::Forgettable);
    /// ```
    #[track_caller]
    pub fn append_tool_result<T: ClassifiedTool + ?Sized>(
        &mut self,
        _tool: &T,
        call_id: impl Into<String>,
        output: Result<String, String>,
    ) -> EntryId {
        let classified = tool_result::<T>(call_id.into(), output, CallSite::caller());
        self.record(classified, EntryKind::Appended)
    }

    /// Runs `tool` for `call` and appends its result with the tool's class. Arguments that
    /// are not valid JSON are not passed to the tool; an error result saying so is appended.
    ///
    /// ```
    /// use favur_context::{retention, History, Retention, Tool, ToolCall};
    /// struct Echo;
    /// #[retention(fuzzy)]
    /// impl Tool for Echo {
    ///     fn name(&self) -> &str { "echo" }
    ///     fn description(&self) -> &str { "Echo the arguments" }
    ///     fn parameters(&self) -> serde_json::Value { serde_json::json!({}) }
    ///     fn call(&self, args: &serde_json::Value) -> Result<String, String> { Ok(args.to_string()) }
    /// }
    /// let mut h = History::new();
    /// let id = h.run_tool(&Echo, &ToolCall::new("c1", "echo", r#"{"x":1}"#));
    /// assert_eq!(h.entry(id).unwrap().message().tool_results().next().unwrap().content, r#"{"x":1}"#);
    /// let bad = h.run_tool(&Echo, &ToolCall::new("c2", "echo", "{x"));
    /// assert!(h.entry(bad).unwrap().message().tool_results().next().unwrap().is_error);
    /// ```
    #[track_caller]
    pub fn run_tool<T: ClassifiedTool + ?Sized>(&mut self, tool: &T, call: &ToolCall) -> EntryId {
        let classified = tool_result::<T>(call.id.clone(), run(tool, call), CallSite::caller());
        self.record(classified, EntryKind::Appended)
    }

    fn record(&mut self, classified: Classified, kind: EntryKind) -> EntryId {
        let entry = self.make_entry(classified, kind);
        let id = entry.id;
        self.restore(entry);
        id
    }

    /// Builds the entry the next record would be (next id, tokens counted) without
    /// recording it, so a journal can write it first and record it only once written.
    pub(crate) fn make_entry(&self, classified: Classified, kind: EntryKind) -> Entry {
        let (message, retention, site) = classified.into_parts();
        let mut entry = Entry {
            id: self.next_id(),
            retention,
            tokens: 0,
            site,
            kind,
            message,
        };
        entry.tokens = self.cost(&entry).0;
        entry
    }

    /// The id the next recorded entry will get.
    ///
    /// ```
    /// use favur_context::{fuzzy, EntryId, History};
    /// let mut h = History::new();
    /// assert_eq!(h.next_id(), EntryId(0));
    /// h.append(fuzzy!(user: "x"));
    /// assert_eq!(h.next_id(), EntryId(1));
    /// ```
    pub fn next_id(&self) -> EntryId {
        EntryId(self.next)
    }

    /// The entries held in memory, in id order: appended, pinned and summaries.
    ///
    /// For a `History` on its own that is every entry ever recorded (compaction never
    /// removes anything), and an entry's index is its id. A
    /// [`JournaledHistory`](crate::JournaledHistory) keeps memory bounded by the view: the
    /// originals of entries that left the view live only in its journal file and are
    /// missing here; read them back with
    /// [`JournaledHistory::recall`](crate::JournaledHistory::recall).
    ///
    /// ```
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// h.append(fuzzy!(user: "x"));
    /// assert_eq!(h.entries().len(), 1);
    /// ```
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry with this id, if any.
    ///
    /// `None` for an id never assigned, and, in a
    /// [`JournaledHistory`](crate::JournaledHistory), for an original evicted from memory
    /// after it left the view (read it back with
    /// [`JournaledHistory::recall`](crate::JournaledHistory::recall)). Entries in the view
    /// and pinned entries are always held.
    ///
    /// ```
    /// use favur_context::{fuzzy, EntryId, History};
    /// let mut h = History::new();
    /// let id = h.append(fuzzy!(user: "x"));
    /// assert!(h.entry(id).is_some());
    /// assert!(h.entry(EntryId(99)).is_none());
    /// ```
    pub fn entry(&self, id: EntryId) -> Option<&Entry> {
        let i = usize::try_from(id.0).ok()?;
        // Nothing evicted below `id`: its index is its id (the O(1) common case).
        if let Some(e) = self.entries.get(i)
            && e.id == id
        {
            return Some(e);
        }
        let below = &self.entries[..i.min(self.entries.len())];
        below
            .binary_search_by_key(&id, |e| e.id)
            .ok()
            .map(|at| &below[at])
    }

    /// Number of entries recorded (including pinned entries and summaries), whether or
    /// not their originals are held in memory.
    ///
    /// ```
    /// assert_eq!(favur_context::History::new().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        usize::try_from(self.next).unwrap_or(usize::MAX)
    }

    /// Whether nothing has been recorded.
    ///
    /// ```
    /// assert!(favur_context::History::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.next == 0
    }

    /// The pinned entries, in the order pinned.
    ///
    /// ```
    /// assert!(favur_context::History::new().pinned().is_empty());
    /// ```
    pub fn pinned(&self) -> &[EntryId] {
        &self.pinned
    }

    /// The current view: everything but the pinned system entries (pinned entries of
    /// other roles are in it, where they were recorded).
    ///
    /// ```
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// h.append(fuzzy!(user: "x"));
    /// assert_eq!(h.view().len(), 1);
    /// ```
    pub fn view(&self) -> &View {
        &self.view
    }

    /// The compactions applied so far, oldest first.
    ///
    /// ```
    /// assert!(favur_context::History::new().compactions().is_empty());
    /// ```
    pub fn compactions(&self) -> &[Compaction] {
        &self.compactions
    }

    /// Tokens the next request would carry: pinned entries, every view item, and the
    /// framing of each message. O(1): the totals are kept as entries are recorded.
    ///
    /// ```
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new().with_framing_tokens(4);
    /// let id = h.append(fuzzy!(user: "hello there"));
    /// assert_eq!(h.usage_tokens(), u64::from(h.entry(id).unwrap().tokens()) + 4);
    /// ```
    pub fn usage_tokens(&self) -> u64 {
        self.usage_with(&self.view, &self.repairs)
    }

    /// Applies a recorded compaction to the view, recording its summary entries. All or
    /// nothing: on error the history and view are unchanged.
    ///
    /// ```
    /// use favur_context::{fuzzy, Compaction, Edit, History};
    /// let mut h = History::new();
    /// let id = h.append(fuzzy!(user: "old"));
    /// h.apply(Compaction { tier: 2, edits: vec![Edit::Drop { id }], usage_after: None }).unwrap();
    /// assert!(h.view().is_empty());
    /// assert_eq!(h.entry(id).unwrap().message().text(), "old"); // still recallable
    /// ```
    pub fn apply(&mut self, compaction: Compaction) -> Result<(), ApplyError> {
        let derived = self.derive(&compaction)?;
        self.commit(compaction, derived);
        Ok(())
    }

    /// The entries (held or evicted) that hold a result for the tool call `call_id`, in
    /// id order.
    pub(crate) fn result_entries(&self, call_id: &str) -> &[EntryId] {
        self.results.get(call_id).map_or(&[], Vec::as_slice)
    }

    fn index_results(&mut self, entry: &Entry) {
        for result in entry.message.tool_results() {
            let ids = self.results.entry(result.call_id.clone()).or_default();
            if ids.last() != Some(&entry.id) {
                ids.push(entry.id);
            }
        }
    }

    /// The shared token counter: a history replaced by another (not a clone of it) has
    /// another one, which is how a journal notices a replacement.
    pub(crate) fn shared_counter(&self) -> &Arc<dyn TokenCounter> {
        &self.counter
    }

    /// Sets the token counter from a shared one (used by journals opening a history).
    pub(crate) fn with_shared_counter(mut self, counter: Arc<dyn TokenCounter>) -> Self {
        self.counter = counter;
        self
    }

    /// Fills in every original evicted from memory, reading each with `fetch`.
    pub(crate) fn fill_evicted<E>(
        &mut self,
        mut fetch: impl FnMut(EntryId) -> Result<Entry, E>,
    ) -> Result<(), E> {
        if self.entries.len() as u64 == self.next {
            return Ok(());
        }
        let mut held = std::mem::take(&mut self.entries).into_iter().peekable();
        let mut all = Vec::with_capacity(self.len());
        for id in (0..self.next).map(EntryId) {
            match held.next_if(|e| e.id == id) {
                Some(e) => all.push(e),
                None => all.push(fetch(id)?),
            }
        }
        self.entries = all;
        Ok(())
    }

    /// Computes what applying `compaction` would give, changing nothing.
    pub(crate) fn derive(&self, compaction: &Compaction) -> Result<(View, Vec<Entry>), ApplyError> {
        // Whether an entry is a tool result (summaries are placed after the tool results
        // of a call that stays). Entries in the view are always held, evicted or not.
        let is_result = |id: EntryId| self.entry(id).is_some_and(|e| e.message.role == Role::Tool);
        let blocks_of =
            |id: EntryId, form: &Form| self.entry(id).map_or(0, |e| forms::blocks(e, form));
        view::derive(
            &self.view,
            compaction,
            self.next_id(),
            &is_result,
            &blocks_of,
        )
    }

    /// Records a compaction whose result [`derive`](History::derive) computed.
    pub(crate) fn commit(&mut self, compaction: Compaction, (view, summaries): (View, Vec<Entry>)) {
        self.next += summaries.len() as u64;
        for summary in &summaries {
            self.index_results(summary);
        }
        self.entries.extend(summaries);
        self.repairs = self.repairs_of(&view);
        self.view = view;
        self.compactions.push(compaction);
    }

    /// Drops from memory the originals of the entries that `compaction` (just applied)
    /// took out of the view: those it dropped or summarized and did not reform. Only a
    /// journal that can read them back calls this. Afterwards the entries held are exactly
    /// the pinned ones and those in the view, if that held before.
    pub(crate) fn evict_left_view(&mut self, compaction: &Compaction) {
        let mut gone: Vec<EntryId> = Vec::new();
        let mut stays: Vec<EntryId> = Vec::new();
        for edit in &compaction.edits {
            match edit {
                view::Edit::Drop { id } => gone.push(*id),
                view::Edit::Summarize { summary } => {
                    if let EntryKind::Summary { replaces } = &summary.kind {
                        gone.extend_from_slice(replaces);
                    }
                }
                view::Edit::Reform { id, .. } => stays.push(*id),
            }
        }
        gone.retain(|id| !stays.contains(id));
        if gone.is_empty() {
            return;
        }
        gone.sort_unstable();
        let first = self.entries.partition_point(|e| e.id < gone[0]);
        let mut tail = self.entries.split_off(first);
        tail.retain(|e| gone.binary_search(&e.id).is_err());
        self.entries.append(&mut tail);
    }

    /// The original of any entry, whether it is in the view, summarized or dropped.
    ///
    /// For a `History` on its own this is every entry. In a
    /// [`JournaledHistory`](crate::JournaledHistory), originals evicted from memory are
    /// `None` here; its own [`recall`](crate::JournaledHistory::recall) reads them back
    /// from the journal file.
    ///
    /// ```
    /// use favur_context::{strict, History};
    /// let mut h = History::new();
    /// let id = h.append(strict!(tool_result("c1"): "Traceback ..."));
    /// assert_eq!(h.recall(id).unwrap().message().tool_results().next().unwrap().content, "Traceback ...");
    /// ```
    pub fn recall(&self, id: EntryId) -> Option<&Entry> {
        self.entry(id)
    }
}

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
    /// [`JournaledHistory::to_history`](crate::JournaledHistory::to_history).
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
            match (written, entry.kind.is_summary()) {
                (true, true) => continue,
                (false, false) => history.restore(entry),
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

    /// Re-records an entry read back from storage (or built by
    /// [`make_entry`](History::make_entry)), keeping its id, class, count and site. The
    /// caller has checked that its id is the next id.
    pub(crate) fn restore(&mut self, entry: Entry) {
        debug_assert_eq!(entry.id.0, self.next);
        self.next = entry.id.0.saturating_add(1);
        self.index_results(&entry);
        let id = entry.id;
        let tokens = entry.tokens;
        let blocks = forms::blocks(&entry, &Form::Verbatim);
        if entry.kind == EntryKind::Pinned {
            self.pinned.push(id);
        }
        if entry.kind == EntryKind::Pinned && entry.message.role == Role::System {
            // System pins go to the system messages / parameter, before the view.
            self.pinned_tokens += u64::from(tokens);
            self.pinned_blocks += u64::from(blocks);
        } else {
            // Everything else, pins included, is shown where it was recorded.
            self.view.push(ViewItem {
                id,
                form: Form::Verbatim,
                tokens,
                shape: Shape::of(&entry),
                blocks,
            });
            let mut repairs = std::mem::take(&mut self.repairs);
            self.feed(&mut repairs, &entry, &Form::Verbatim);
            self.repairs = repairs;
        }
        self.entries.push(entry);
    }
}

/// The classified tool-result message for `output` of a call answered by `T`.
pub(crate) fn tool_result<T: ClassifiedTool + ?Sized>(
    call_id: String,
    output: Result<String, String>,
    site: CallSite,
) -> Classified {
    let (content, is_error) = match output {
        Ok(out) => (out, false),
        Err(err) => (err, true),
    };
    let message = Message::tool_result(call_id, content, is_error);
    Classified::with_site(message, T::RETENTION, site)
}

/// Runs `tool` for `call`; invalid JSON arguments are an error output, not a call.
pub(crate) fn run<T: ClassifiedTool + ?Sized>(tool: &T, call: &ToolCall) -> Result<String, String> {
    match &call.arguments {
        Arguments::Json(args) => tool.call(args),
        Arguments::Invalid(raw) => Err(format!(
            "the arguments of this call are not valid JSON: {raw}"
        )),
    }
}

/// Whether a compaction can be applied when the next id is `next`.
pub(crate) fn ready(c: &Compaction, next: EntryId) -> bool {
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

#[cfg(test)]
mod eviction_tests;
mod usage;
