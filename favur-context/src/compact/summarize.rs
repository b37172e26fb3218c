//! Summarizers: what turns one run of entries into the text of one summary.
//!
//! [`Summarizer`] is the synchronous trait (the built-in summarizer, or a blocking client);
//! [`AsyncSummarizer`] is its async counterpart for agent code that calls an LLM. Neither
//! needs an async runtime from this crate: the engine only awaits the futures you give it.

use std::future::Future;
use std::num::NonZeroU8;

use crate::model::entry::{Entry, EntryId};
use crate::model::retention::Retention;

mod acted;
mod budget;
mod builtin;
mod entry;
mod error_words;
mod hits;
mod item;
mod line_kind;
mod lines;
mod name_scan;
mod names;
mod numbers;
mod order;
mod producers;
mod regions;
mod text;

pub use builtin::BuiltinSummarizer;

/// What a summarizer is asked for: one summary of one contiguous run of entries.
///
/// ```
/// use favur_context::compact::SummaryRequest;
/// use favur_context::{fuzzy, EntryId, History, Retention};
/// let mut h = History::new();
/// let id = h.append(fuzzy!(user: "hello"));
/// let entry = h.recall(id).unwrap();
/// let entries = [&*entry];
/// let req = SummaryRequest { summary: EntryId(1), tier: std::num::NonZeroU8::MIN, retention: Retention::Fuzzy, budget_tokens: 100, entries: &entries, context: &[], later: &[] };
/// assert_eq!(req.entries.len(), 1);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct SummaryRequest<'a> {
    /// The id the summary entry will get.
    pub summary: EntryId,
    /// The tier that fired.
    pub tier: NonZeroU8,
    /// The class the summary will carry.
    pub retention: Retention,
    /// The budget for the summary text, in tokens.
    pub budget_tokens: u32,
    /// The entries of the run, in order (originals, whatever their current form).
    pub entries: &'a [&'a Entry],
    /// The assistant turns that opened the exchanges of the run's entries but are not
    /// part of the run (they stay in the view, in full or as their calls): read them for
    /// what produced each result (the tool call a result answers, the command a
    /// plain-chat observation shows the output of). They are not to be summarized.
    pub context: &'a [&'a Entry],
    /// The assistant turns recorded after the run's last member that are still held,
    /// in order (at most the last [`SummaryRequest::MAX_LATER`]): what the agent typed
    /// since (its text, its tool calls' arguments), like the run's own assistant turns
    /// after an output, points at the lines of it the agent acted on, which a summary
    /// should keep verbatim. They are not to be summarized.
    pub later: &'a [&'a Entry],
}

impl SummaryRequest<'_> {
    /// The most later assistant turns the engine gives a summarizer (the most recent
    /// ones), so reading them stays cheap on a long run.
    pub const MAX_LATER: usize = 128;
}

/// A summarizer failed (an LLM timed out, say). The engine falls back to the built-in
/// summarizer for that run and records the failure in the report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SummarizeError {
    message: String,
}

impl SummarizeError {
    /// An error with this message.
    pub fn new(message: impl std::fmt::Display) -> Self {
        SummarizeError {
            message: message.to_string(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Writes the text of one summary, synchronously. Called once per run, never per entry:
/// the engine hands every run of a compaction to [`summarize_runs`](Self::summarize_runs)
/// at once, which calls [`summarize`](Self::summarize) on each unless overridden.
///
/// The engine adds a header naming the ids the summary replaces, so the text need only
/// hold the gist. An empty text counts as a failure.
///
/// ```
/// use favur_context::compact::{SummarizeError, Summarizer, SummaryRequest};
/// struct Count;
/// impl Summarizer for Count {
///     fn summarize(&self, r: &SummaryRequest<'_>) -> Result<String, SummarizeError> {
///         Ok(format!("{} entries", r.entries.len()))
///     }
/// }
/// let mut h = favur_context::History::new();
/// let id = h.append(favur_context::forgettable!(user: "a listing"));
/// let entry = h.recall(id).unwrap();
/// let entries = [&*entry];
/// let request = SummaryRequest { summary: favur_context::EntryId(1), tier: std::num::NonZeroU8::MIN, retention: favur_context::Retention::Forgettable, budget_tokens: 50, entries: &entries, context: &[], later: &[] };
/// let texts = Count.summarize_runs(&[request]);
/// assert_eq!(texts.len(), 1);
/// assert_eq!(texts[0].as_deref().unwrap(), "1 entries");
/// ```
pub trait Summarizer {
    /// The summary text of `request.entries`, within about `request.budget_tokens`.
    fn summarize(&self, request: &SummaryRequest<'_>) -> Result<String, SummarizeError>;

    /// The summary texts of the runs of one compaction, one per request, in order. By
    /// default [`summarize`](Self::summarize) on each; override it to read what the runs
    /// share once (the [`BuiltinSummarizer`] reads the agent's later turns once). Each
    /// text must be what `summarize` would give for its request: a summarizer may be
    /// called either way (the asynchronous path and the fallback call `summarize`).
    fn summarize_runs(
        &self,
        requests: &[SummaryRequest<'_>],
    ) -> Vec<Result<String, SummarizeError>> {
        requests.iter().map(|r| self.summarize(r)).collect()
    }
}

/// Writes the text of one summary, asynchronously (an LLM call). Use it with
/// [`Compactor::compact_async`](crate::Compactor::compact_async) or
/// [`Compactor::prepare_async`](crate::Compactor::prepare_async); any executor works.
///
/// ```
/// use favur_context::compact::{AsyncSummarizer, SummarizeError, SummaryRequest};
/// struct Llm;
/// impl AsyncSummarizer for Llm {
///     async fn summarize(&self, r: &SummaryRequest<'_>) -> Result<String, SummarizeError> {
///         // call your model here
///         Ok(format!("{} entries about the parser", r.entries.len()))
///     }
/// }
/// ```
///
/// The future must be `Send` (so that [`Compactor::prepare_async`](crate::Compactor::prepare_async)
/// can be spawned on a multi-threaded executor): holding an `Rc` across an await does not
/// compile.
///
/// ```compile_fail
/// use favur_context::compact::{AsyncSummarizer, SummarizeError, SummaryRequest};
/// struct Local;
/// impl AsyncSummarizer for Local {
///     async fn summarize(&self, _: &SummaryRequest<'_>) -> Result<String, SummarizeError> {
///         let shared = std::rc::Rc::new("gist");
///         std::future::ready(()).await; // error: future cannot be sent between threads safely
///         Ok(shared.to_string())
///     }
/// }
/// ```
pub trait AsyncSummarizer {
    /// The summary text of `request.entries`, within about `request.budget_tokens`.
    ///
    /// The future is `Send`, so the compactor's futures are too (spawn them on a
    /// multi-threaded executor); an `async fn` here is, if what it holds across its
    /// awaits is.
    fn summarize(
        &self,
        request: &SummaryRequest<'_>,
    ) -> impl Future<Output = Result<String, SummarizeError>> + Send;

    /// The summary texts of every run of one compaction at once, if this summarizer has
    /// them without awaiting anything (a synchronous summarizer behind [`Ready`] does:
    /// its [`Summarizer::summarize_runs`]). `None`, the default, makes the engine await
    /// [`summarize`](Self::summarize) run by run. Each text must be what `summarize`
    /// would give for its request.
    ///
    /// ```
    /// use favur_context::compact::{AsyncSummarizer, BuiltinSummarizer, Ready, SummaryRequest};
    /// use favur_context::{forgettable, EntryId, History, Retention};
    /// let mut h = History::new();
    /// let id = h.append(forgettable!(tool_result("c1"): "src/lib.rs\nsrc/parse.rs"));
    /// let entry = h.recall(id).unwrap();
    /// let entries = [&*entry];
    /// let request = SummaryRequest { summary: EntryId(1), tier: std::num::NonZeroU8::MIN, retention: Retention::Forgettable, budget_tokens: 50, entries: &entries, context: &[], later: &[] };
    /// let now = Ready(BuiltinSummarizer::default()).summarize_runs_now(&[request]).unwrap();
    /// let text = now[0].as_deref().unwrap();
    /// assert!(text.contains("src/lib.rs src/parse.rs"), "{text}");
    /// ```
    fn summarize_runs_now(
        &self,
        requests: &[SummaryRequest<'_>],
    ) -> Option<Vec<Result<String, SummarizeError>>> {
        let _ = requests;
        None
    }
}

/// Makes any [`Summarizer`] usable where an [`AsyncSummarizer`] is expected (its future
/// is ready at once), and still where a [`Summarizer`] is: one compactor type for code
/// that calls both `prepare` and `prepare_async` (a store of each kind).
///
/// ```
/// use favur_context::compact::{AsyncSummarizer, BuiltinSummarizer, Ready, Summarizer};
/// fn takes_async(_: &impl AsyncSummarizer) {}
/// fn takes_sync(_: &impl Summarizer) {}
/// let s = Ready(BuiltinSummarizer::default());
/// takes_async(&s);
/// takes_sync(&s);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Ready<S>(pub S);

impl<S: Summarizer> Summarizer for Ready<S> {
    fn summarize(&self, request: &SummaryRequest<'_>) -> Result<String, SummarizeError> {
        self.0.summarize(request)
    }

    fn summarize_runs(
        &self,
        requests: &[SummaryRequest<'_>],
    ) -> Vec<Result<String, SummarizeError>> {
        self.0.summarize_runs(requests)
    }
}

impl<S: Summarizer> AsyncSummarizer for Ready<S> {
    fn summarize(
        &self,
        request: &SummaryRequest<'_>,
    ) -> impl Future<Output = Result<String, SummarizeError>> + Send {
        std::future::ready(self.0.summarize(request))
    }

    fn summarize_runs_now(
        &self,
        requests: &[SummaryRequest<'_>],
    ) -> Option<Vec<Result<String, SummarizeError>>> {
        Some(self.0.summarize_runs(requests))
    }
}
