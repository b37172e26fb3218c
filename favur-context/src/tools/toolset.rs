//! The tool registry: tools of any type, dispatched by name, declared to each provider.

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use crate::history::History;
use crate::model::classify::Classified;
use crate::model::message::{Arguments, Message, ToolCall};
use crate::model::retention::Retention;
use crate::model::site::CallSite;
use crate::model::tool::{
    AsyncTool, ClassifiedAsyncTool, ClassifiedTool, SyncTool, ToolDefinition, ToolDefinitionError,
};
use crate::tokens::counter::TokenCounter;
use crate::tools::recall::RecallTool;

struct Registered {
    definition: ToolDefinition,
    retention: Retention,
    /// `None` for the recall tool, answered from the history given to `run`.
    tool: Option<Arc<dyn AsyncTool>>,
}

/// A registry of classified tools: runs a model's tool call by name and answers it with a
/// tool result carrying the tool's class, and renders every tool's definition for OpenAI
/// and Anthropic.
///
/// Only classified tools can be registered ([`ClassifiedAsyncTool`], or a sync
/// [`ClassifiedTool`]), so no result comes out unclassified. A call no tool answers (an
/// unknown name), or whose arguments are not valid JSON, gets an error result, never a
/// panic: the first with the class given to [`new`](ToolSet::new), the second with the
/// tool's own class. The [recall tool](RecallTool) is one of the tools when added with
/// [`with_recall`](ToolSet::with_recall).
///
/// ```
/// use favur_context::tools::{Tool, ToolSet};
/// use favur_context::{retention, History, Retention, ToolCall};
/// use serde_json::{json, Value};
///
/// struct ListDir;
/// #[retention(forgettable)]
/// impl Tool for ListDir {
///     fn name(&self) -> &str { "list_dir" }
///     fn description(&self) -> &str { "List a directory" }
///     fn parameters(&self) -> Value { json!({"type": "object", "properties": {"path": {"type": "string"}}}) }
///     fn call(&self, _: &Value) -> Result<String, String> { Ok("Cargo.toml\nsrc/".into()) }
/// }
///
/// let tools = ToolSet::new(Retention::Fuzzy).with_sync(ListDir)?.with_recall(Retention::Fuzzy)?;
/// assert_eq!(tools.openai_tools()[0]["function"]["name"], "list_dir");
/// assert_eq!(tools.anthropic_tools()[1]["name"], "recall");
///
/// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     let mut f = std::pin::pin!(f);
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// let mut history = History::new();
/// let answer = block_on(tools.run(&ToolCall::new("c1", "list_dir", json!({"path": "."})), &history));
/// assert_eq!(answer.retention(), Retention::Forgettable);
/// history.append(answer);
/// let unknown = block_on(tools.run(&ToolCall::new("c2", "rm_rf", json!({})), &history));
/// assert!(unknown.message().tool_results().next().unwrap().is_error);
/// # Ok::<(), favur_context::tools::ToolSetError>(())
/// ```
pub struct ToolSet {
    tools: Vec<Registered>,
    unrouted: Retention,
    /// The recall tool's page size, if its answers are paged.
    recall_pages: Option<u32>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.names().collect::<Vec<_>>())
            .field("unrouted", &self.unrouted)
            .finish()
    }
}

/// A tool could not be registered.
///
/// ```
/// use favur_context::tools::{ToolSet, ToolSetError};
/// use favur_context::Retention;
/// let err = ToolSet::new(Retention::Fuzzy).with_recall(Retention::Fuzzy).unwrap().with_recall(Retention::Strict).unwrap_err();
/// assert_eq!(err.to_string(), "a tool named `recall` is already registered");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolSetError {
    /// Its definition breaks the providers' rules.
    #[error(transparent)]
    Definition(#[from] ToolDefinitionError),
    /// Another tool has the same name.
    #[error("a tool named `{0}` is already registered")]
    Duplicate(String),
}

impl ToolSet {
    /// An empty set; `unrouted` is the class of the error results answering calls to tools
    /// that are not in the set.
    pub fn new(unrouted: Retention) -> Self {
        ToolSet {
            tools: Vec::new(),
            unrouted,
            recall_pages: None,
        }
    }

    fn add(
        &mut self,
        definition: ToolDefinition,
        retention: Retention,
        tool: Option<Arc<dyn AsyncTool>>,
    ) -> Result<(), ToolSetError> {
        if self
            .tools
            .iter()
            .any(|t| t.definition.name() == definition.name())
        {
            return Err(ToolSetError::Duplicate(definition.name().to_owned()));
        }
        self.tools.push(Registered {
            definition,
            retention,
            tool,
        });
        Ok(())
    }

    /// Registers an async tool with its class.
    ///
    /// # Errors
    ///
    /// [`ToolSetError`] for an invalid definition or a name already taken.
    pub fn register<T: ClassifiedAsyncTool + 'static>(
        &mut self,
        tool: T,
    ) -> Result<(), ToolSetError> {
        let definition = ToolDefinition::of(&tool)?;
        self.add(definition, T::RETENTION, Some(Arc::new(tool)))
    }

    /// Registers a synchronous tool with its class (it runs inside the returned future).
    ///
    /// # Errors
    ///
    /// As for [`register`](ToolSet::register).
    pub fn register_sync<T: ClassifiedTool + Send + Sync + 'static>(
        &mut self,
        tool: T,
    ) -> Result<(), ToolSetError> {
        let tool = SyncTool(tool);
        let definition = ToolDefinition::of(&tool)?;
        self.add(definition, T::RETENTION, Some(Arc::new(tool)))
    }

    /// [`register`](ToolSet::register), builder style.
    ///
    /// # Errors
    ///
    /// As for [`register`](ToolSet::register).
    pub fn with<T: ClassifiedAsyncTool + 'static>(mut self, tool: T) -> Result<Self, ToolSetError> {
        self.register(tool)?;
        Ok(self)
    }

    /// [`register_sync`](ToolSet::register_sync), builder style.
    ///
    /// # Errors
    ///
    /// As for [`register`](ToolSet::register).
    pub fn with_sync<T: ClassifiedTool + Send + Sync + 'static>(
        mut self,
        tool: T,
    ) -> Result<Self, ToolSetError> {
        self.register_sync(tool)?;
        Ok(self)
    }

    /// Adds the [recall tool](RecallTool); its answers get `retention`.
    ///
    /// # Errors
    ///
    /// [`ToolSetError::Duplicate`] if a tool named `recall` is already registered.
    pub fn with_recall(mut self, retention: Retention) -> Result<Self, ToolSetError> {
        self.add(RecallTool.definition(), retention, None)?;
        Ok(self)
    }

    /// Adds the [recall tool](RecallTool) answering in parts of at most `page_tokens`
    /// (see [`RecallTool::handle_paged`]): give it the policy's
    /// [per-entry cap](crate::Policy::entry_cap_tokens) so that the model can read an
    /// original longer than the cap, one part at a time.
    ///
    /// # Errors
    ///
    /// [`ToolSetError::Duplicate`] if a tool named `recall` is already registered.
    pub fn with_recall_paged(
        mut self,
        retention: Retention,
        page_tokens: u32,
    ) -> Result<Self, ToolSetError> {
        self.add(RecallTool.definition(), retention, None)?;
        self.recall_pages = Some(page_tokens);
        Ok(self)
    }

    /// The tools' names, in the order registered.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.definition.name())
    }

    /// The class of the results of the tool `name`, if it is registered.
    ///
    /// ```
    /// use favur_context::tools::ToolSet;
    /// use favur_context::Retention;
    /// let tools = ToolSet::new(Retention::Strict).with_recall(Retention::Forgettable).unwrap();
    /// assert_eq!(tools.retention_of("recall"), Some(Retention::Forgettable));
    /// assert_eq!(tools.retention_of("nope"), None);
    /// ```
    pub fn retention_of(&self, name: &str) -> Option<Retention> {
        self.find(name).map(|t| t.retention)
    }

    fn find(&self, name: &str) -> Option<&Registered> {
        self.tools.iter().find(|t| t.definition.name() == name)
    }

    /// The tools' definitions, in the order registered.
    pub fn definitions(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.tools.iter().map(|t| &t.definition)
    }

    /// The `tools` array of an OpenAI Chat Completions request.
    pub fn openai_tools(&self) -> Value {
        Value::Array(self.definitions().map(ToolDefinition::to_openai).collect())
    }

    /// The `tools` array of an Anthropic Messages request.
    pub fn anthropic_tools(&self) -> Value {
        Value::Array(
            self.definitions()
                .map(ToolDefinition::to_anthropic)
                .collect(),
        )
    }

    /// Tokens the OpenAI `tools` array costs in each request, counted with `counter` on
    /// its JSON text: set it as the history's request overhead (see
    /// [`History::set_request_overhead_tokens`](crate::History::set_request_overhead_tokens)).
    ///
    /// ```
    /// use favur_context::tokens::HeuristicCounter;
    /// use favur_context::tools::ToolSet;
    /// use favur_context::Retention;
    /// let tools = ToolSet::new(Retention::Strict).with_recall(Retention::Fuzzy).unwrap();
    /// assert!(tools.definitions_tokens(&HeuristicCounter) > 50);
    /// assert_eq!(ToolSet::new(Retention::Strict).definitions_tokens(&HeuristicCounter), 0);
    /// ```
    pub fn definitions_tokens(&self, counter: &dyn TokenCounter) -> u64 {
        if self.tools.is_empty() {
            return 0;
        }
        u64::from(counter.count_text(&self.openai_tools().to_string()))
    }

    /// Runs `call` and answers it with a classified tool result, ready to append. The
    /// recall tool reads from `history` (a journal's is `journal.history()`). Records the
    /// caller as the call site.
    #[track_caller]
    pub fn run<'a>(
        &'a self,
        call: &'a ToolCall,
        history: &'a History,
    ) -> impl Future<Output = Classified> + Send + 'a {
        self.run_at(call, history, CallSite::caller())
    }

    /// Runs `calls` one after another (in order, so results follow the calls) and returns
    /// their answers.
    #[track_caller]
    pub fn run_all<'a>(
        &'a self,
        calls: &'a [ToolCall],
        history: &'a History,
    ) -> impl Future<Output = Vec<Classified>> + Send + 'a {
        let site = CallSite::caller();
        async move {
            let mut out = Vec::with_capacity(calls.len());
            for call in calls {
                out.push(self.run_at(call, history, site.clone()).await);
            }
            out
        }
    }

    async fn run_at(&self, call: &ToolCall, history: &History, site: CallSite) -> Classified {
        {
            let answer = |(content, is_error): (String, bool), retention| {
                Classified::with_site(
                    Message::tool_result(call.id.clone(), content, is_error),
                    retention,
                    site,
                )
            };
            let Some(registered) = self.find(&call.name) else {
                let known: Vec<&str> = self.names().collect();
                let text = format!(
                    "unknown tool `{}`; the tools are: {}",
                    call.name,
                    known.join(", ")
                );
                return answer((text, true), self.unrouted);
            };
            let outcome = match (&registered.tool, &call.arguments) {
                (_, Arguments::Invalid(raw)) => Err(format!(
                    "the arguments of this call are not valid JSON: {raw}"
                )),
                (None, arguments) => RecallTool
                    .handle_paged(history, arguments, self.recall_pages)
                    .map_err(|e| e.to_string()),
                (Some(tool), Arguments::Json(args)) => tool.call(args).await,
            };
            let pair = match outcome {
                Ok(out) => (out, false),
                Err(err) => (err, true),
            };
            let classified = answer(pair, registered.retention);
            match (&registered.tool, &call.arguments) {
                (Some(tool), Arguments::Json(args)) => {
                    crate::model::tool::keyed(classified, tool.key(args), tool.key_part(args))
                }
                _ => classified,
            }
        }
    }
}
