//! The async sibling of [`Store`]: [`AsyncStore`], for stores whose writes are awaited
//! (a database over the network), and every synchronous store as one.

use std::future::Future;

use crate::history::NewEntry;
use crate::history::view::Compaction;
use crate::history::{CheckedCompaction, History};
use crate::model::classify::Classify;
use crate::model::entry::EntryId;
use crate::model::message::ToolCall;
use crate::model::tool::ClassifiedTool;
use crate::store_trait::Store;
use crate::tools::toolset::ToolSet;

/// A history that records with awaited writes: the `PgStore` (feature `postgres`), and
/// every [`Store`] that is `Send` (the in-memory [`History`], the
/// [`JournaledHistory`](crate::journal::JournaledHistory), the `SqliteStore` (feature `sqlite`))
/// through a blanket implementation. Agent code written against `AsyncStore` runs on any
/// of them, changing only how the store is opened.
///
/// The protocol is [`Store`]'s: a store drafts ([`History::draft`]) or checks
/// ([`History::check`]), awaits its write, then commits ([`History::insert`],
/// [`History::commit`]); a write is acknowledged (the future resolves `Ok`) only once the
/// store has it, and on `Err` nothing was recorded. The futures are `Send`, so an agent
/// loop can be `tokio::spawn`ed.
///
/// The provided methods ([`append`](AsyncStore::append), [`pin`](AsyncStore::pin), ...)
/// are plain functions that build the [`NewEntry`] at once (so the entry's call site is
/// the caller's: `#[track_caller]` does not apply to `async fn`) and return the write's
/// future. Nothing is written until it is awaited.
///
/// A synchronous store implements both traits, whose methods share names: with both in
/// scope, call one explicitly (`Store::append(&mut journal, m)`), or import only the one
/// the code uses (agent code generic over `S: AsyncStore` sees only this one).
///
/// ```
/// use favur_context::{fuzzy, strict, AsyncStore, History};
/// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     let mut f = std::pin::pin!(f);
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// async fn start<S: AsyncStore>(store: &mut S) -> Result<(), S::Error> {
///     store.pin(strict!(system: "You are a coding agent.")).await?;
///     store.append(fuzzy!(user: "Fix the parser.")).await?;
///     Ok(())
/// }
/// let mut memory = History::new();
/// block_on(start(&mut memory)).unwrap();
/// assert_eq!(memory.len(), 2);
/// assert_eq!(memory.pinned().len(), 1);
/// ```
pub trait AsyncStore: Send {
    /// Why a write failed.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The history as recorded: view, pinned entries, usage, compactions, and
    /// [`recall`](History::recall) of any original.
    fn history(&self) -> &History;

    /// Records `entries` in order, all or none, and resolves to the id of the first (the
    /// next id for an empty batch).
    ///
    /// # Errors
    ///
    /// The store's error; then none of the entries was recorded.
    fn record(
        &mut self,
        entries: Vec<NewEntry>,
    ) -> impl Future<Output = Result<EntryId, Self::Error>> + Send;

    /// Applies a compaction record, all or nothing.
    ///
    /// # Errors
    ///
    /// The store's error, e.g. when the record does not apply to the view; then nothing
    /// changed.
    fn apply(
        &mut self,
        compaction: Compaction,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Applies a compaction already checked against this store's history, without
    /// checking it again (see [`Store::apply_checked`]). By default,
    /// [`apply`](AsyncStore::apply) of its record.
    ///
    /// # Errors
    ///
    /// As for [`apply`](AsyncStore::apply); a store that commits the check without checking
    /// again refuses one made before a later write or on another history. Then nothing
    /// changed.
    fn apply_checked(
        &mut self,
        checked: CheckedCompaction,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send
    where
        Self: Sized,
    {
        self.apply(checked.into_compaction())
    }

    /// Sets the tokens every request carries beyond its messages (the tool definitions),
    /// recorded by a durable store so a reopened session budgets the same; a value equal
    /// to the current one writes nothing. See [`Store::set_request_overhead_tokens`].
    ///
    /// # Errors
    ///
    /// The store's error; then the overhead is unchanged.
    fn set_request_overhead_tokens(
        &mut self,
        tokens: u64,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Sets the request overhead to what `tools`' definitions cost with this history's
    /// counter ([`ToolSet::definitions_tokens`]) and resolves to it (see
    /// [`Store::budget_tools`]).
    ///
    /// # Errors
    ///
    /// The store's error; then the overhead is unchanged.
    ///
    /// ```
    /// use favur_context::tools::ToolSet;
    /// use favur_context::{AsyncStore, History, Retention};
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
    /// # }
    /// let tools = ToolSet::new(Retention::Strict).with_recall(Retention::Fuzzy).unwrap();
    /// let mut h = History::new();
    /// let tokens = block_on(AsyncStore::budget_tools(&mut h, &tools)).unwrap();
    /// assert_eq!(h.request_overhead_tokens(), tokens);
    /// ```
    fn budget_tools(
        &mut self,
        tools: &ToolSet,
    ) -> impl Future<Output = Result<u64, Self::Error>> + Send
    where
        Self: Sized,
    {
        let tokens = tools.definitions_tokens(AsyncStore::history(self).counter());
        let write = self.set_request_overhead_tokens(tokens);
        async move { write.await.map(|()| tokens) }
    }

    /// Appends a classified value (see [`History::append`]); the call site is this call's.
    ///
    /// # Errors
    ///
    /// The store's error; then nothing was recorded.
    ///
    /// ```
    /// use favur_context::{fuzzy, AsyncStore, History};
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
    /// # }
    /// let mut h = History::new();
    /// let write = AsyncStore::append(&mut h, fuzzy!(user: "hi"));
    /// let id = block_on(write).unwrap(); // written when awaited
    /// assert_eq!(h.recall(id).unwrap().message().text(), "hi");
    /// ```
    #[track_caller]
    fn append<M: Classify>(
        &mut self,
        message: M,
    ) -> impl Future<Output = Result<EntryId, Self::Error>> + Send
    where
        Self: Sized,
    {
        let entry = NewEntry::appended(message);
        self.record(vec![entry])
    }

    /// Records `entries` as one write keyed by `key`, unless the session already holds a
    /// write with that key: then nothing is written and the future resolves to that
    /// write's first id (see [`Store::record_once`]). Whether the key is held is read
    /// when this is called; the store is borrowed until the write is awaited.
    ///
    /// # Errors
    ///
    /// As for [`Store::record_once`].
    ///
    /// ```
    /// use favur_context::store::NewEntry;
    /// use favur_context::{fuzzy, AsyncStore, History};
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
    /// # }
    /// let mut h = History::new();
    /// let reply = || vec![NewEntry::appended(fuzzy!(assistant: "Done."))];
    /// let first = block_on(AsyncStore::record_once(&mut h, "resp_1", reply())).unwrap();
    /// let again = block_on(AsyncStore::record_once(&mut h, "resp_1", reply())).unwrap();
    /// assert_eq!((first, again, h.len()), (first, first, 1));
    /// ```
    fn record_once(
        &mut self,
        key: &str,
        entries: Vec<NewEntry>,
    ) -> impl Future<Output = Result<EntryId, Self::Error>> + Send
    where
        Self: Sized,
    {
        // `Err(first)`: held, nothing to write.
        let write = match self.history().recorded_with_key(key) {
            Some(first) => Err(first),
            None => Ok(self.record(crate::history::keyed(key, entries))),
        };
        async move {
            match write {
                Ok(write) => write.await,
                Err(first) => Ok(first),
            }
        }
    }

    /// Appends a classified value keyed by `key`, once: see
    /// [`record_once`](AsyncStore::record_once).
    ///
    /// # Errors
    ///
    /// As for [`Store::record_once`].
    #[track_caller]
    fn append_once<M: Classify>(
        &mut self,
        key: &str,
        message: M,
    ) -> impl Future<Output = Result<EntryId, Self::Error>> + Send
    where
        Self: Sized,
    {
        let entry = NewEntry::appended(message);
        self.record_once(key, vec![entry])
    }

    /// Pins a classified message (see [`History::pin`]).
    ///
    /// # Errors
    ///
    /// The store's error; then nothing was recorded.
    #[track_caller]
    fn pin<M: Classify>(
        &mut self,
        message: M,
    ) -> impl Future<Output = Result<EntryId, Self::Error>> + Send
    where
        Self: Sized,
    {
        let entry = NewEntry::pinned(message);
        self.record(vec![entry])
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
    ) -> impl Future<Output = Result<EntryId, Self::Error>> + Send
    where
        Self: Sized,
    {
        let entry = NewEntry::tool_result(tool, call_id, output);
        self.record(vec![entry])
    }

    /// Runs `tool` for `call` now and returns the future that appends its result with the
    /// tool's class (see [`History::run_tool`]).
    ///
    /// # Errors
    ///
    /// The store's error; then nothing was recorded (the tool did run).
    ///
    /// ```
    /// use favur_context::tools::Tool;
    /// use favur_context::{retention, AsyncStore, History, Retention, ToolCall};
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
    /// # }
    /// struct Ls;
    /// #[retention(forgettable)]
    /// impl Tool for Ls {
    ///     fn name(&self) -> &str { "ls" }
    ///     fn description(&self) -> &str { "List files" }
    ///     fn parameters(&self) -> serde_json::Value { serde_json::json!({}) }
    ///     fn call(&self, _: &serde_json::Value) -> Result<String, String> { Ok("src/".into()) }
    /// }
    /// let mut h = History::new();
    /// let id = block_on(AsyncStore::run_tool(&mut h, &Ls, &ToolCall::new("c1", "ls", "{}"))).unwrap();
    /// assert_eq!(h.recall(id).unwrap().retention(), Retention::Forgettable);
    /// ```
    #[track_caller]
    fn run_tool<T: ClassifiedTool + ?Sized>(
        &mut self,
        tool: &T,
        call: &ToolCall,
    ) -> impl Future<Output = Result<EntryId, Self::Error>> + Send
    where
        Self: Sized,
    {
        let entry = NewEntry::tool_run(tool, call);
        self.record(vec![entry])
    }
}

/// Every synchronous store is an async one whose writes complete when awaited.
impl<S: Store + Send> AsyncStore for S {
    type Error = S::Error;

    fn history(&self) -> &History {
        Store::history(self)
    }

    async fn record(&mut self, entries: Vec<NewEntry>) -> Result<EntryId, S::Error> {
        Store::record(self, entries)
    }

    async fn apply(&mut self, compaction: Compaction) -> Result<(), S::Error> {
        Store::apply(self, compaction)
    }

    async fn apply_checked(&mut self, checked: CheckedCompaction) -> Result<(), S::Error> {
        Store::apply_checked(self, checked)
    }

    async fn set_request_overhead_tokens(&mut self, tokens: u64) -> Result<(), S::Error> {
        Store::set_request_overhead_tokens(self, tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{fuzzy, strict};

    /// The output of a future that is ready at once (a synchronous store's write).
    fn ready<F: Future>(f: F) -> F::Output {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match std::pin::pin!(f).poll(&mut cx) {
            std::task::Poll::Ready(v) => v,
            std::task::Poll::Pending => unreachable!("a synchronous store's write is ready"),
        }
    }

    #[crate::retention(fuzzy)]
    struct Note(&'static str);

    impl From<Note> for crate::Message {
        fn from(n: Note) -> Self {
            crate::Message::user(n.0)
        }
    }

    #[test]
    fn async_appends_record_the_callers_site_and_write_only_when_awaited() {
        let mut h = History::new();
        drop(AsyncStore::append(&mut h, Note("never awaited")));
        assert!(h.is_empty(), "a future never awaited writes nothing");
        let pending = AsyncStore::append(&mut h, Note("x"));
        let line = line!() - 1;
        let id = ready(pending).unwrap();
        assert_eq!(h.recall(id).unwrap().site().line(), line);
        assert!(
            h.recall(id)
                .unwrap()
                .site()
                .file()
                .ends_with("async_store.rs")
        );
        let id = ready(AsyncStore::pin(&mut h, strict!(system: "sys"))).unwrap();
        assert_eq!(h.pinned(), &[id]);
        let first = ready(AsyncStore::record(
            &mut h,
            vec![
                NewEntry::appended(fuzzy!(user: "a")),
                NewEntry::appended(fuzzy!(user: "b")),
            ],
        ))
        .unwrap();
        assert_eq!((first, h.next_id()), (EntryId(2), EntryId(4)));
    }
}
