//! The one way every history records: [`Store`], implemented by the in-memory
//! [`History`] and by the [`JournaledHistory`](crate::journal::JournaledHistory).
//!
//! See [`Store`] for the design: what flows through it, and why it is synchronous;
//! [`AsyncStore`] is its async sibling (module `async_store`).

mod async_store;
pub(crate) mod seal;

pub use async_store::AsyncStore;

/// The version of the database schema the stores create and migrate to (a
/// `favur_schema_version` table holds the database's); a newer database is refused
/// with `StoreError::Schema`. Version 2 adds the `mac` column of sealed sessions.
pub const SCHEMA_VERSION: i64 = 2;

use crate::history::view::Compaction;
use crate::history::{CheckedCompaction, History};
use crate::history::{NewEntry, RecordError};
use crate::model::classify::Classify;
use crate::model::entry::EntryId;
use crate::model::message::ToolCall;
use crate::model::tool::ClassifiedTool;
use crate::tools::toolset::ToolSet;

/// A history that records: the in-memory [`History`] or a durable store such as the
/// [`JournaledHistory`](crate::journal::JournaledHistory). The compactor
/// ([`Compactor::prepare`](crate::Compactor::prepare)), tools, recall and rendering take
/// any store the same way.
///
/// Every write is acknowledged only once the store has it: on `Err`, nothing was recorded
/// (or the store refuses further writes, saying so in its error).
///
/// # Design
///
/// A store persists entries and compactions, and besides them only the request overhead
/// ([`Store::set_request_overhead_tokens`], a record that takes no id): the compactor
/// turns a plan and its summaries into a [`Compaction`] record and hands it to
/// [`Store::apply`]; appends, pins and tool results are [`NewEntry`] batches handed to
/// [`Store::record`]. The rules (next ids, token counts, the view a compaction derives,
/// which originals stay in memory) live in [`History`] alone: a store drafts
/// ([`History::draft`]) or checks ([`History::check`]), persists, then commits
/// ([`History::insert`], [`History::commit`]). So a store never diffs a history, and
/// memory never runs ahead of what is stored.
///
/// The methods are synchronous with a typed associated error: a file journal and SQLite
/// fit that as they are, and the in-memory history keeps plain calls. An async database
/// store (`PgStore`, feature `postgres`) keeps the same protocol, since the state
/// transitions are [`History`]'s: its `record` / `apply` futures draft or check, await the
/// write, then commit. That is the sibling trait [`AsyncStore`] (whose futures are
/// `Send`), which every `Send` store implements too, taken by
/// [`Compactor::prepare_async`](crate::Compactor::prepare_async), whose only difference is
/// awaiting the apply.
///
/// ```
/// use favur_context::journal::JournaledHistory;
/// use favur_context::{fuzzy, strict, Compactor, History, Policy, Store};
///
/// // One helper for every store.
/// fn start<S: Store>(store: &mut S) -> Result<(), S::Error> {
///     store.pin(strict!(system: "You are a coding agent."))?;
///     store.append(fuzzy!(user: "Fix the parser."))?;
///     Ok(())
/// }
///
/// let mut memory = History::new();
/// start(&mut memory).unwrap();
/// # let path = std::env::temp_dir().join(format!("favur-doc-store-{}.jsonl", std::process::id()));
/// # let _ = std::fs::remove_file(&path);
/// let mut journal = JournaledHistory::open(&path)?;
/// start(&mut journal)?;
/// assert_eq!(journal.history().view(), memory.view());
///
/// let mut compactor = Compactor::new(Policy::default());
/// let done = compactor.prepare(&mut journal)?;
/// assert!(!done.compacted());
/// # drop(journal); std::fs::remove_file(&path).unwrap();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Store {
    /// Why a write failed ([`RecordError`] for the in-memory history,
    /// [`JournalError`](crate::journal::JournalError) for the journal).
    type Error: std::error::Error + Send + Sync + 'static;

    /// The history as recorded: view, pinned entries, usage, compactions, and
    /// [`recall`](History::recall) of any original.
    fn history(&self) -> &History;

    /// Records `entries` in order, all or none, and returns the id of the first (the
    /// others follow it; the next id for an empty batch).
    ///
    /// # Errors
    ///
    /// The store's error; then none of the entries was recorded.
    fn record(&mut self, entries: Vec<NewEntry>) -> Result<EntryId, Self::Error>;

    /// Records `entries` as one write keyed by `key` (a provider reply id, a tool call
    /// id, or one the caller makes), unless this session already holds a write with that
    /// key: then nothing is written and the first id of that earlier write is returned.
    /// The key is persisted with the write (one record, all or none), so it holds across
    /// reopening. A write that failed with an unknown outcome
    /// (`StoreError::Uncertain` of the SQL stores) is retried safely: reopen the
    /// store and call this again with the same key. An empty batch records nothing (the
    /// next id), its key included.
    ///
    /// # Errors
    ///
    /// The store's error; [`RecordError::Key`] (in the store's error) for an empty key or
    /// one longer than [`MAX_KEY_BYTES`](crate::store::MAX_KEY_BYTES). Then nothing was
    /// recorded.
    ///
    /// ```
    /// use favur_context::store::NewEntry;
    /// use favur_context::{fuzzy, strict, History, Store};
    /// let mut h = History::new();
    /// h.pin(strict!(system: "sys"));
    /// let reply = || vec![NewEntry::appended(fuzzy!(assistant: "Done."))];
    /// let first = h.record_once("resp_abc", reply())?;
    /// let again = h.record_once("resp_abc", reply())?; // a retry: nothing written
    /// assert_eq!(again, first);
    /// assert_eq!(h.len(), 2);
    /// # Ok::<(), favur_context::store::RecordError>(())
    /// ```
    fn record_once(&mut self, key: &str, entries: Vec<NewEntry>) -> Result<EntryId, Self::Error>
    where
        Self: Sized,
    {
        match self.history().recorded_with_key(key) {
            Some(first) => Ok(first),
            None => self.record(crate::history::keyed(key, entries)),
        }
    }

    /// Appends a classified value keyed by `key`, once: see
    /// [`record_once`](Store::record_once).
    ///
    /// # Errors
    ///
    /// As for [`record_once`](Store::record_once).
    ///
    /// ```
    /// use favur_context::{fuzzy, History, Store};
    /// let mut h = History::new();
    /// let a = Store::append_once(&mut h, "call_7", fuzzy!(tool_result("call_7"): "ok"))?;
    /// let b = Store::append_once(&mut h, "call_7", fuzzy!(tool_result("call_7"): "ok"))?;
    /// assert_eq!((a, b, h.len()), (a, a, 1));
    /// # Ok::<(), favur_context::store::RecordError>(())
    /// ```
    #[track_caller]
    fn append_once<M: Classify>(&mut self, key: &str, message: M) -> Result<EntryId, Self::Error>
    where
        Self: Sized,
    {
        self.record_once(key, vec![NewEntry::appended(message)])
    }

    /// Applies a compaction record (written by the compactor, or by hand), all or
    /// nothing.
    ///
    /// # Errors
    ///
    /// The store's error, e.g. when the record does not apply to the view
    /// ([`RecordError::Compaction`]); then nothing changed.
    fn apply(&mut self, compaction: Compaction) -> Result<(), Self::Error>;

    /// Applies a compaction already checked against this store's history
    /// ([`History::check`] on [`history`](Store::history)), all or nothing, without
    /// checking it again: what the compactor does with the record it has just checked.
    /// By default, [`apply`](Store::apply) of its record (which checks it again).
    ///
    /// # Errors
    ///
    /// As for [`apply`](Store::apply). A store that commits the check without checking
    /// again (the history, the journal, the database stores) refuses it with
    /// [`RecordError::Stale`] (in its own error) if the history changed since the check
    /// or the check was made on another history. Then nothing changed.
    ///
    /// ```
    /// use favur_context::compact::{Compaction, Edit};
    /// use favur_context::{fuzzy, History, Store};
    /// let mut h = History::new();
    /// let id = h.append(fuzzy!(user: "old"));
    /// let checked = h.check(Compaction { tier: std::num::NonZeroU8::new(2).unwrap(), edits: vec![Edit::Drop { id }], usage_after: None }).unwrap();
    /// Store::apply_checked(&mut h, checked).unwrap();
    /// assert!(h.view().is_empty());
    /// ```
    fn apply_checked(&mut self, checked: CheckedCompaction) -> Result<(), Self::Error> {
        self.apply(checked.into_compaction())
    }

    /// Sets the tokens every request carries beyond its messages (the tool definitions,
    /// fixed instructions sent outside the history): counted in
    /// [`usage_tokens`](History::usage_tokens), so the tiers and the limit see them (see
    /// [`History::set_request_overhead_tokens`]). A durable store records it (a
    /// `request_overhead` record, taking no id) so a reopened session budgets the same; a
    /// value equal to the current one writes nothing, so setting it after every open is
    /// free. The output reserve is the policy's
    /// ([`Policy::reserve_output_tokens`](crate::Policy::reserve_output_tokens)), applied
    /// by the compactor alike on every store.
    ///
    /// # Errors
    ///
    /// The store's error; then the overhead is unchanged.
    ///
    /// ```
    /// use favur_context::{fuzzy, History, Store};
    /// fn budget<S: Store>(store: &mut S) -> Result<u64, S::Error> {
    ///     store.append(fuzzy!(user: "hi"))?;
    ///     let before = store.history().usage_tokens();
    ///     Store::set_request_overhead_tokens(store, 291)?;
    ///     Ok(store.history().usage_tokens() - before)
    /// }
    /// assert_eq!(budget(&mut History::new()).unwrap(), 291);
    /// ```
    fn set_request_overhead_tokens(&mut self, tokens: u64) -> Result<(), Self::Error>;

    /// Sets the request overhead to what `tools`' definitions cost with this history's
    /// counter ([`ToolSet::definitions_tokens`](crate::tools::ToolSet::definitions_tokens)), as
    /// [`set_request_overhead_tokens`](Store::set_request_overhead_tokens) does, and
    /// returns it.
    ///
    /// # Errors
    ///
    /// The store's error; then the overhead is unchanged.
    ///
    /// ```
    /// use favur_context::tools::ToolSet;
    /// use favur_context::{History, Retention, Store};
    /// let tools = ToolSet::new(Retention::Strict).with_recall(Retention::Fuzzy).unwrap();
    /// let mut h = History::new();
    /// let tokens = Store::budget_tools(&mut h, &tools).unwrap();
    /// assert!(tokens > 50);
    /// assert_eq!(h.usage_tokens(), tokens);
    /// ```
    fn budget_tools(&mut self, tools: &ToolSet) -> Result<u64, Self::Error> {
        let tokens = tools.definitions_tokens(self.history().counter());
        self.set_request_overhead_tokens(tokens)?;
        Ok(tokens)
    }

    /// Appends a classified value (see [`History::append`]) and returns its id.
    ///
    /// # Errors
    ///
    /// The store's error; then nothing was recorded.
    #[track_caller]
    fn append<M: Classify>(&mut self, message: M) -> Result<EntryId, Self::Error>
    where
        Self: Sized,
    {
        self.record(vec![NewEntry::appended(message)])
    }

    /// Pins a classified message (see [`History::pin`]) and returns its id.
    ///
    /// # Errors
    ///
    /// The store's error; then nothing was recorded.
    #[track_caller]
    fn pin<M: Classify>(&mut self, message: M) -> Result<EntryId, Self::Error>
    where
        Self: Sized,
    {
        self.record(vec![NewEntry::pinned(message)])
    }

    /// Appends the result of `tool`'s call `call_id` with the tool's class (see
    /// [`History::append_tool_result`]).
    ///
    /// # Errors
    ///
    /// The store's error; then nothing was recorded.
    #[track_caller]
    fn append_tool_result<T: ClassifiedTool + ?Sized>(
        &mut self,
        tool: &T,
        call_id: impl Into<String>,
        output: Result<String, String>,
    ) -> Result<EntryId, Self::Error>
    where
        Self: Sized,
    {
        self.record(vec![NewEntry::tool_result(tool, call_id, output)])
    }

    /// Runs `tool` for `call` and appends its result with the tool's class (see
    /// [`History::run_tool`]).
    ///
    /// # Errors
    ///
    /// The store's error; then nothing was recorded (the tool did run).
    #[track_caller]
    fn run_tool<T: ClassifiedTool + ?Sized>(
        &mut self,
        tool: &T,
        call: &ToolCall,
    ) -> Result<EntryId, Self::Error>
    where
        Self: Sized,
    {
        self.record(vec![NewEntry::tool_run(tool, call)])
    }
}

impl Store for History {
    type Error = RecordError;

    fn history(&self) -> &History {
        self
    }

    fn record(&mut self, entries: Vec<NewEntry>) -> Result<EntryId, RecordError> {
        let first = self.next_id();
        let write = self.draft_write(entries);
        self.admits_write(&write)?;
        self.insert_write(write)?;
        Ok(first)
    }

    fn apply(&mut self, compaction: Compaction) -> Result<(), RecordError> {
        History::apply(self, compaction)
    }

    fn apply_checked(&mut self, checked: CheckedCompaction) -> Result<(), RecordError> {
        self.commit(checked)
    }

    fn set_request_overhead_tokens(&mut self, tokens: u64) -> Result<(), RecordError> {
        History::set_request_overhead_tokens(self, tokens);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{fuzzy, strict};

    #[test]
    fn a_batch_on_the_in_memory_history_gets_consecutive_ids() {
        let mut h = History::new();
        h.append(fuzzy!(user: "before"));
        let first = Store::record(
            &mut h,
            vec![
                NewEntry::pinned(strict!(system: "sys")),
                NewEntry::appended(fuzzy!(user: "a")),
            ],
        )
        .unwrap();
        assert_eq!(first, EntryId(1));
        assert_eq!(h.recall(EntryId(2)).unwrap().message().text(), "a");
        assert_eq!(h.pinned(), &[EntryId(1)]);
        assert_eq!(Store::record(&mut h, Vec::new()).unwrap(), EntryId(3));
    }

    #[test]
    fn a_retention_function_appends_plain_content_to_any_store() {
        #[crate::retention(strict)]
        fn setup<S: Store>(store: &mut S) -> Result<EntryId, S::Error> {
            store.pin("the system prompt")?;
            store.append(String::from("a directive"))
        }
        let mut h = History::new();
        let id = setup(&mut h).unwrap();
        let entry = h.recall(id).unwrap();
        assert_eq!(entry.retention(), crate::Retention::Strict);
        assert_eq!(entry.message().text(), "a directive");
        assert_eq!(h.pinned(), &[EntryId(0)]);
    }

    #[test]
    fn trait_appends_record_the_callers_site() {
        fn via<S: Store>(s: &mut S) -> EntryId {
            s.append(crate::Message::user("x").classify(crate::Retention::Fuzzy))
                .ok()
                .unwrap_or(EntryId(u64::MAX))
        }
        let mut h = History::new();
        let id = Store::append(&mut h, fuzzy!(user: "x")).unwrap();
        let line = line!() - 1;
        assert_eq!(h.recall(id).unwrap().site().line(), line);
        let id = via(&mut h);
        assert!(
            h.recall(id)
                .unwrap()
                .site()
                .file()
                .ends_with("store_trait.rs")
        );
    }
}
