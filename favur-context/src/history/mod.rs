//! The history: every entry ever recorded, the pinned entries, and the current view.
//!
//! [`History`] owns every rule of recording: the next id, token counts, the view a
//! compaction record derives, which originals stay in memory. Stores
//! ([`Store`](crate::Store)) persist what it drafts and checks, then commit it here.

mod calls;
mod copy;
mod errors;
mod json;
mod new_entry;
mod newest;
mod once;
mod originals;
mod protocol;
mod records;
mod result_ids;
mod summary;
pub(crate) mod usage;
mod verify;
pub(crate) mod view;

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::history::result_ids::ResultIds;
use crate::history::view::{Compaction, View};
use crate::model::classify::Classify;
use crate::model::entry::{Entry, EntryId};
use crate::model::message::ToolCall;
use crate::model::site::Sites;
use crate::model::tool::ClassifiedTool;
use crate::sent;
use crate::tokens::counter::{HeuristicCounter, TokenCounter};

pub use errors::{RecallError, RecordError};
pub use json::{CounterChange, LoadError};
pub use new_entry::NewEntry;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use once::Write;
pub(crate) use once::keyed;
pub use once::{KeyError, MAX_KEY_BYTES};
pub use originals::Originals;
pub(crate) use protocol::Change;
pub use records::CheckedCompaction;

/// Tokens each message costs in a request beyond its content (role markers, separators).
pub const DEFAULT_FRAMING_TOKENS: u32 = 4;

/// The conversation history of one agent job, in memory.
///
/// Every entry is classified: [`append`](History::append) accepts only values that carry a
/// retention class, so `history.append("text")` does not compile. Entries are never edited
/// or removed; compaction changes only the [`View`] the model is shown.
///
/// `History` is the in-memory [`Store`](crate::Store): the compactor, tools, recall and
/// rendering take it the same way they take a
/// [`JournaledHistory`](crate::journal::JournaledHistory). Its own `append` and `pin` cannot fail,
/// so they return the id directly.
///
/// `History` is `Send + Sync`: hold it across `.await` points or share it behind a lock.
///
/// ```
/// use favur_context::{forgettable, strict, History, Retention};
///
/// let mut history = History::new();
/// let id = history.append(strict!(user: "Fix the failing test in {}", "src/parse.rs"));
/// history.append(forgettable!(tool_result("call_1"): "Cargo.toml\nsrc/\ntests/"));
/// assert_eq!(history.len(), 2);
/// assert_eq!(history.recall(id).unwrap().retention(), Retention::Strict);
/// assert!(history.usage_tokens() > 0);
/// ```
///
/// An unclassified append is a compile error:
///
/// ```compile_fail
/// let mut history = favur_context::History::new();
/// history.append("some text"); // error: `&str` has no retention class
/// ```
pub struct History {
    /// The originals held in memory, in id order. Without an [`Originals`] reader that is
    /// every entry, so an entry's index is its id; with one (a journal), originals that
    /// left the view are evicted and read back from it.
    entries: Vec<Entry>,
    /// Ids assigned so far (the next id), whether their originals are held or not.
    next: u64,
    /// The entries holding a result for each tool-call id, in id order: small metadata
    /// kept for every entry, held or evicted, so renderers can point at a result that
    /// left the view.
    results: HashMap<String, ResultIds>,
    /// The distinct call sites of the entries, each held once and shared by its entries.
    sites: Sites,
    pinned: Vec<EntryId>,
    pinned_tokens: u64,
    pinned_blocks: u64,
    view: View,
    /// What rendering adds while repairing the pairing of the view, kept up to date.
    repairs: sent::Repairs,
    compactions: Vec<Compaction>,
    /// The idempotency keys of keyed writes ([`Store::record_once`](crate::Store::record_once)).
    keys: once::Keys,
    counter: Arc<dyn TokenCounter>,
    /// What a summary block costs beyond its text, by this counter (see
    /// [`sent::summary_frame_cost`]), counted once.
    summary_frame: std::sync::OnceLock<(u64, u64)>,
    framing: u32,
    /// Tokens every request carries beyond its messages (the tool definitions).
    overhead: u64,
    /// Where evicted originals are read back from, and the ids it may evict: those below
    /// the bound (a clone's own later entries are not in its store), every id with none.
    originals: Option<(Arc<dyn Originals>, Option<u64>)>,
    /// Unique to this value (a clone gets its own): what a
    /// [`Renderer`](crate::render::Renderer) knows a history by.
    instance: u64,
}

/// A number no other history has (see [`History::instance`]).
fn new_instance() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Clone for History {
    /// A copy that shares the original reader only for the ids recorded so far: entries
    /// the copy records later stay in its memory.
    fn clone(&self) -> Self {
        History {
            entries: self.entries.clone(),
            next: self.next,
            results: self.results.clone(),
            sites: self.sites.clone(),
            pinned: self.pinned.clone(),
            pinned_tokens: self.pinned_tokens,
            pinned_blocks: self.pinned_blocks,
            repairs: self.repairs.clone(),
            view: self.view.clone(),
            compactions: self.compactions.clone(),
            keys: self.keys.clone(),
            counter: Arc::clone(&self.counter),
            summary_frame: self.summary_frame.clone(),
            framing: self.framing,
            overhead: self.overhead,
            originals: self.originals.as_ref().map(|(o, bound)| {
                (
                    Arc::clone(o),
                    Some(bound.map_or(self.next, |b| b.min(self.next))),
                )
            }),
            instance: new_instance(),
        }
    }
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
    pub fn new() -> Self {
        History::with_counter(HeuristicCounter)
    }

    /// An empty history that counts tokens with `counter`.
    ///
    /// ```
    /// use favur_context::tokens::TokenCounter;
    /// use favur_context::{fuzzy, History};
    /// struct Bytes;
    /// impl TokenCounter for Bytes {
    ///     fn count_text(&self, t: &str) -> u32 { t.len() as u32 }
    /// }
    /// let mut h = History::with_counter(Bytes);
    /// let id = h.append(fuzzy!(user: "abcd"));
    /// assert_eq!(h.recall(id).unwrap().tokens(), 4);
    /// ```
    pub fn with_counter(counter: impl TokenCounter + 'static) -> Self {
        History::with_shared(Arc::new(counter))
    }

    pub(crate) fn with_shared(counter: Arc<dyn TokenCounter>) -> Self {
        History {
            entries: Vec::new(),
            next: 0,
            results: HashMap::new(),
            sites: Sites::default(),
            pinned: Vec::new(),
            pinned_tokens: 0,
            pinned_blocks: 0,
            repairs: sent::Repairs::default(),
            view: View::default(),
            compactions: Vec::new(),
            keys: once::Keys::default(),
            counter,
            summary_frame: std::sync::OnceLock::new(),
            framing: DEFAULT_FRAMING_TOKENS,
            overhead: 0,
            originals: None,
            instance: new_instance(),
        }
    }

    /// Sets the per-message framing tokens counted in usage (default
    /// [`DEFAULT_FRAMING_TOKENS`]).
    pub fn with_framing_tokens(mut self, framing: u32) -> Self {
        self.framing = framing;
        self
    }

    /// Keeps memory bounded by the view: once an entry leaves the view (summarized or
    /// dropped), its original is evicted from memory and [`recall`](History::recall)
    /// reads it back from `originals`. For a store that persists every entry (a journal
    /// does this for you).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use favur_context::compact::{Compaction, Edit};
    /// use favur_context::store::{Originals, RecallError};
    /// use favur_context::{fuzzy, Entry, EntryId, History};
    /// struct Archive(Vec<Entry>);
    /// impl Originals for Archive {
    ///     fn original(&self, id: EntryId) -> Result<Entry, RecallError> {
    ///         self.0.get(id.0 as usize).cloned().ok_or(RecallError::UnknownId { id, next: EntryId(self.0.len() as u64) })
    ///     }
    /// }
    /// let mut full = History::new();
    /// let old = full.append(fuzzy!(user: "old"));
    /// let archive = Arc::new(Archive(full.entries().to_vec()));
    /// let mut h = History::new().with_originals(archive);
    /// h.insert(full.entries()[0].clone()).unwrap();
    /// h.apply(Compaction { tier: std::num::NonZeroU8::new(2).unwrap(), edits: vec![Edit::Drop { id: old }], usage_after: None }).unwrap();
    /// assert!(h.entries().is_empty()); // evicted...
    /// assert_eq!(h.recall(old).unwrap().message().text(), "old"); // ...read back
    /// ```
    pub fn with_originals(mut self, originals: Arc<dyn Originals>) -> Self {
        self.originals = Some((originals, None));
        self
    }

    /// Sets the tokens every request carries beyond its messages: the tool definitions
    /// (see [`ToolSet::definitions_tokens`](crate::tools::ToolSet::definitions_tokens)), any
    /// fixed instructions sent outside the history. Counted in
    /// [`usage_tokens`](History::usage_tokens), so the tiers and the limit see it. Default 0;
    /// saved with the history.
    ///
    /// ```
    /// use favur_context::{fuzzy, History};
    /// let mut h = History::new();
    /// h.append(fuzzy!(user: "hi"));
    /// let before = h.usage_tokens();
    /// h.set_request_overhead_tokens(291);
    /// assert_eq!(h.usage_tokens(), before + 291);
    /// ```
    pub fn set_request_overhead_tokens(&mut self, tokens: u64) {
        self.overhead = tokens;
    }

    /// The tokens every request carries beyond its messages (see
    /// [`set_request_overhead_tokens`](History::set_request_overhead_tokens)).
    pub fn request_overhead_tokens(&self) -> u64 {
        self.overhead
    }

    /// What a summary block costs beyond its text with this history's counter: with no
    /// id range, and per range (see [`sent::summary_frame_cost`]), counted once.
    pub(crate) fn summary_frame(&self) -> (u64, u64) {
        *self
            .summary_frame
            .get_or_init(|| sent::summary_frame_cost(self.counter.as_ref()))
    }

    /// The per-message framing tokens.
    pub fn framing_tokens(&self) -> u32 {
        self.framing
    }

    /// The token counter in use.
    pub fn counter(&self) -> &dyn TokenCounter {
        &*self.counter
    }

    /// Appends a classified value and returns its id. Its tokens are counted once, here.
    ///
    /// Only values that carry a retention class are accepted: [`Classified`](crate::Classified) (from the
    /// macros or [`Message::classify`](crate::Message::classify)) and types marked `#[retention(...)]`. The call site
    /// recorded is the macro's, or this call's for a value classified by its type. This is
    /// [`Store::append`](crate::Store::append) for the in-memory history, which cannot
    /// fail.
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
        self.record_one(NewEntry::appended(message))
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
        self.record_one(NewEntry::pinned(message))
    }

    /// Appends the result of `tool`'s call `call_id`, classified with the tool's own class.
    /// `Err` output is recorded as an error result. The in-memory form of
    /// [`Store::append_tool_result`](crate::Store::append_tool_result).
    ///
    /// ```
    /// use favur_context::tools::Tool;
    /// use favur_context::{retention, History, Retention};
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
    /// assert_eq!(h.recall(id).unwrap().retention(), Retention::Forgettable);
    /// ```
    #[track_caller]
    pub fn append_tool_result<T: ClassifiedTool + ?Sized>(
        &mut self,
        tool: &T,
        call_id: impl Into<String>,
        output: Result<String, String>,
    ) -> EntryId {
        self.record_one(NewEntry::tool_result(tool, call_id, output))
    }

    /// Runs `tool` for `call` and appends its result with the tool's class. Arguments that
    /// are not valid JSON are not passed to the tool; an error result saying so is
    /// appended. The in-memory form of [`Store::run_tool`](crate::Store::run_tool).
    ///
    /// ```
    /// use favur_context::tools::Tool;
    /// use favur_context::{retention, History, Retention, ToolCall};
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
    /// assert_eq!(h.recall(id).unwrap().message().tool_results().next().unwrap().content, r#"{"x":1}"#);
    /// let bad = h.run_tool(&Echo, &ToolCall::new("c2", "echo", "{x"));
    /// assert!(h.recall(bad).unwrap().message().tool_results().next().unwrap().is_error);
    /// ```
    #[track_caller]
    pub fn run_tool<T: ClassifiedTool + ?Sized>(&mut self, tool: &T, call: &ToolCall) -> EntryId {
        self.record_one(NewEntry::tool_run(tool, call))
    }

    fn record_one(&mut self, new: NewEntry) -> EntryId {
        let (mut entry, sent_as_is) = self.draft_sent(new, 0);
        // Held for the life of the history: no spare capacity from how it was built.
        entry.message.shrink_to_fit();
        let id = entry.id;
        self.push_sent(entry, Some(sent_as_is));
        id
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

    /// A number unique to this history value, a clone included: between two calls
    /// that see the same instance, compactions and pins, its view only grew at its end.
    pub(crate) fn instance(&self) -> u64 {
        self.instance
    }

    /// The originals held in memory, in id order: appended, pinned and summaries.
    ///
    /// For a `History` on its own that is every entry ever recorded (compaction never
    /// removes anything), and an entry's index is its id. A history with an
    /// [`Originals`] reader (the one inside a [`JournaledHistory`](crate::journal::JournaledHistory))
    /// keeps memory bounded by the view: originals of entries that left the view are
    /// missing here. To read any entry by id, use [`recall`](History::recall); for a copy
    /// holding every original, [`full_copy`](History::full_copy).
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

    /// The entry with this id if its original is held in memory (entries in the view and
    /// pinned entries always are).
    pub(crate) fn entry(&self, id: EntryId) -> Option<&Entry> {
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

    /// The original of any entry, whether it is in the view, summarized or dropped:
    /// borrowed when it is held in memory, read back from the [`Originals`] reader (a
    /// journal's file) otherwise. The same on every store: a helper given the history of
    /// a [`JournaledHistory`](crate::journal::JournaledHistory) reads evicted originals back.
    ///
    /// # Errors
    ///
    /// [`RecallError::UnknownId`] for an id never assigned; the reader's error (I/O,
    /// corruption) if an evicted original cannot be read back.
    ///
    /// ```
    /// use favur_context::store::RecallError;
    /// use favur_context::{strict, EntryId, History};
    /// let mut h = History::new();
    /// let id = h.append(strict!(tool_result("c1"): "Traceback ..."));
    /// assert_eq!(h.recall(id).unwrap().message().tool_results().next().unwrap().content, "Traceback ...");
    /// let err = h.recall(EntryId(7)).unwrap_err();
    /// assert!(matches!(err, RecallError::UnknownId { id: EntryId(7), .. }));
    /// assert_eq!(err.to_string(), "no entry #7 (ids run from #0 to #0)");
    /// ```
    pub fn recall(&self, id: EntryId) -> Result<Cow<'_, Entry>, RecallError> {
        if let Some(entry) = self.entry(id) {
            return Ok(Cow::Borrowed(entry));
        }
        match &self.originals {
            Some((originals, _)) if id.0 < self.next => originals.original(id).map(Cow::Owned),
            _ => Err(RecallError::UnknownId {
                id,
                next: self.next_id(),
            }),
        }
    }

    /// Number of entries recorded (including pinned entries and summaries), whether or
    /// not their originals are held in memory.
    pub fn len(&self) -> usize {
        usize::try_from(self.next).unwrap_or(usize::MAX)
    }

    /// Whether nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.next == 0
    }

    /// The pinned entries, in the order pinned.
    pub fn pinned(&self) -> &[EntryId] {
        &self.pinned
    }

    /// The current view (pinned entries excluded).
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
    /// assert_eq!(h.usage_tokens(), u64::from(h.recall(id).unwrap().tokens()) + 4);
    /// ```
    pub fn usage_tokens(&self) -> u64 {
        self.usage_with(&self.view, &self.repairs) + self.overhead
    }
}

pub(crate) use calls::{run, tool_result};
