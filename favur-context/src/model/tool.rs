//! Tools whose results are classified by the tool's own `#[retention(...)]`.

use std::future::Future;
use std::pin::Pin;

use serde_json::{Value, json};

use crate::model::classify::{Classified, KeyPart};
use crate::model::retention::Retention;

/// The tool traits' classified sides: each the trait the `#[retention(...)]` attribute
/// implements on a tool's impl block, with the class of all its results. `$note` says which
/// block to mark when it is missing.
macro_rules! classified_traits {
    ($($(#[$doc:meta])* $name:ident: $tool:ident, $note:literal;)*) => {$(
        $(#[$doc])*
        #[diagnostic::on_unimplemented(
            message = "tool `{Self}` has no retention class",
            label = "the results of this tool would have no retention class",
            note = $note
        )]
        pub trait $name: $tool {
            /// The class of every result this tool produces.
            const RETENTION: Retention;
        }
    )*};
}

/// A tool an agent exposes to its model.
///
/// Mark the impl with `#[retention(...)]` so that every result the tool produces is
/// appended with that class (see [`History::run_tool`](crate::History::run_tool)).
///
/// ```
/// use favur_context::tools::Tool;
/// use favur_context::retention;
/// use serde_json::{json, Value};
///
/// struct ListDir;
///
/// #[retention(forgettable)]
/// impl Tool for ListDir {
///     fn name(&self) -> &str { "list_dir" }
///     fn description(&self) -> &str { "List a directory" }
///     fn parameters(&self) -> Value { json!({"type": "object", "properties": {"path": {"type": "string"}}}) }
///     fn call(&self, _arguments: &Value) -> Result<String, String> { Ok("Cargo.toml\nsrc/".into()) }
/// }
/// ```
pub trait Tool {
    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// The JSON schema of its arguments.
    fn parameters(&self) -> Value;
    /// Runs it: `Ok(output)` or `Err(error text)`; both are appended as its result.
    fn call(&self, arguments: &Value) -> Result<String, String>;
    /// The [supersession key](crate::Classified::with_key) of the result of a call with
    /// `arguments`: what the result is a copy of (the file a view or an edit is of, the
    /// command a test run ran). A later result with the same key supersedes this one, and
    /// compaction takes it first. `None` (the default): never superseded.
    ///
    /// ```
    /// use favur_context::compact::Plan;
    /// use favur_context::tools::Tool;
    /// use favur_context::{retention, History, Policy, ToolCall, fuzzy};
    /// struct ReadFile;
    /// #[retention(fuzzy)]
    /// impl Tool for ReadFile {
    ///     fn name(&self) -> &str { "read_file" }
    ///     fn description(&self) -> &str { "Show a file" }
    ///     fn parameters(&self) -> serde_json::Value { serde_json::json!({}) }
    ///     fn call(&self, _: &serde_json::Value) -> Result<String, String> { Ok("fn main() {}\n".repeat(900)) }
    ///     fn key(&self, arguments: &serde_json::Value) -> Option<String> {
    ///         arguments["path"].as_str().map(str::to_owned)
    ///     }
    /// }
    /// let mut h = History::new();
    /// let first = h.run_tool(&ReadFile, &ToolCall::new("c1", "read_file", r#"{"path":"src/main.rs"}"#));
    /// h.run_tool(&ReadFile, &ToolCall::new("c2", "read_file", r#"{"path":"src/main.rs"}"#));
    /// h.append(fuzzy!(assistant: "read it twice"));
    /// assert_eq!(Plan::new(&h, &Policy::default(), std::num::NonZeroU8::new(2).unwrap()).superseded(), &[first]);
    /// ```
    fn key(&self, arguments: &Value) -> Option<String> {
        let _ = arguments;
        None
    }
    /// The [part](crate::Classified::with_key_part) of what [`key`](Tool::key) names that
    /// the result of a call with `arguments` shows: the lines a `read_file` with a range
    /// read. A part is superseded only by a later whole copy or a part that covers it.
    /// `None` (the default): the whole of it.
    ///
    /// ```
    /// use favur_context::compact::Plan;
    /// use favur_context::message::KeyPart;
    /// use favur_context::tools::Tool;
    /// use favur_context::{retention, History, Policy, ToolCall, fuzzy};
    /// struct ReadLines;
    /// #[retention(fuzzy)]
    /// impl Tool for ReadLines {
    ///     fn name(&self) -> &str { "read_lines" }
    ///     fn description(&self) -> &str { "Show lines of a file" }
    ///     fn parameters(&self) -> serde_json::Value { serde_json::json!({}) }
    ///     fn call(&self, _: &serde_json::Value) -> Result<String, String> { Ok("let x = 1;\n".repeat(900)) }
    ///     fn key(&self, a: &serde_json::Value) -> Option<String> { a["path"].as_str().map(str::to_owned) }
    ///     fn key_part(&self, a: &serde_json::Value) -> Option<KeyPart> {
    ///         Some(KeyPart::Lines(a["from"].as_u64()?, a["to"].as_u64()?))
    ///     }
    /// }
    /// let mut h = History::new();
    /// let call = |id, from, to| ToolCall::new(id, "read_lines", format!(r#"{{"path":"a.rs","from":{from},"to":{to}}}"#));
    /// let wide = h.run_tool(&ReadLines, &call("c1", 1, 50));
    /// let narrow = h.run_tool(&ReadLines, &call("c2", 10, 20)); // covers only part of the first
    /// h.append(fuzzy!(assistant: "read"));
    /// let whole = Policy::builder().target(0.0).build().unwrap(); // the whole tier
    /// let two = std::num::NonZeroU8::new(2).unwrap();
    /// assert!(Plan::new(&h, &whole, two).superseded().is_empty());
    /// h.run_tool(&ReadLines, &call("c3", 1, 100)); // covers both
    /// h.append(fuzzy!(assistant: "read again"));
    /// assert_eq!(Plan::new(&h, &whole, two).superseded(), &[wide, narrow]);
    /// ```
    fn key_part(&self, _arguments: &Value) -> Option<KeyPart> {
        None
    }
}

/// The future an [`AsyncTool`] returns: `Ok(output)` or `Err(error text)`, boxed and
/// `Send` so a tool set can hold tools of different types and run them on any executor.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;

/// An async tool an agent exposes to its model. Object-safe: a
/// [`ToolSet`](crate::tools::ToolSet) holds tools of different types as `Arc<dyn AsyncTool>`.
///
/// Mark the impl with `#[retention(...)]` (it then implements [`ClassifiedAsyncTool`]):
/// only classified tools can be registered, so every result carries the tool's class.
///
/// ```
/// use favur_context::tools::{AsyncTool, ToolFuture};
/// use favur_context::retention;
/// use serde_json::{json, Value};
///
/// struct Bash;
///
/// #[retention(strict)]
/// impl AsyncTool for Bash {
///     fn name(&self) -> &str { "bash" }
///     fn description(&self) -> &str { "Run a shell command" }
///     fn parameters(&self) -> Value {
///         json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]})
///     }
///     fn call<'a>(&'a self, arguments: &'a Value) -> ToolFuture<'a> {
///         Box::pin(async move {
///             let command = arguments["command"].as_str().ok_or("`command` must be a string")?;
///             Ok(format!("ran {command}"))
///         })
///     }
/// }
/// assert_eq!(<Bash as favur_context::tools::ClassifiedAsyncTool>::RETENTION, favur_context::Retention::Strict);
/// ```
pub trait AsyncTool: Send + Sync {
    /// The name the model calls it by (`^[a-zA-Z0-9_-]{1,64}$` for OpenAI and Anthropic).
    fn name(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// The JSON Schema of its arguments (an object schema: `{"type": "object", ...}`).
    fn parameters(&self) -> Value;
    /// Runs it with arguments that are valid JSON: `Ok(output)` or `Err(error text)`;
    /// both become its result.
    fn call<'a>(&'a self, arguments: &'a Value) -> ToolFuture<'a>;
    /// The supersession key of the result of a call with `arguments` (see
    /// [`Tool::key`]). `None` (the default): never superseded.
    fn key(&self, arguments: &Value) -> Option<String> {
        let _ = arguments;
        None
    }
    /// The part of what [`key`](AsyncTool::key) names that the result shows (see
    /// [`Tool::key_part`]). `None` (the default): the whole of it.
    fn key_part(&self, _arguments: &Value) -> Option<KeyPart> {
        None
    }
}

classified_traits! {
    /// A [`Tool`] whose results carry a retention class, declared with `#[retention(...)]` on
    /// its `impl Tool` block.
    ///
    /// ```
    /// use favur_context::tools::{ClassifiedTool, Tool};
    /// use favur_context::{retention, Retention};
    /// struct Cat;
    /// #[retention(fuzzy)]
    /// impl Tool for Cat {
    ///     fn name(&self) -> &str { "cat" }
    ///     fn description(&self) -> &str { "Show a file" }
    ///     fn parameters(&self) -> serde_json::Value { serde_json::json!({}) }
    ///     fn call(&self, _: &serde_json::Value) -> Result<String, String> { Ok(String::new()) }
    /// }
    /// assert_eq!(<Cat as ClassifiedTool>::RETENTION, Retention::Fuzzy);
    /// ```
    ClassifiedTool: Tool,
    "mark its `impl Tool for {Self}` block with `#[retention(forgettable)]`, `#[retention(fuzzy)]` or `#[retention(strict)]`";

    /// An [`AsyncTool`] whose results carry a retention class, declared with
    /// `#[retention(...)]` on its `impl AsyncTool` block.
    ClassifiedAsyncTool: AsyncTool,
    "mark its `impl AsyncTool for {Self}` block with `#[retention(forgettable)]`, `#[retention(fuzzy)]` or `#[retention(strict)]`";
}

/// A synchronous [`ClassifiedTool`] run as an [`AsyncTool`] (its future is ready at
/// once), for [`ToolSet::register_sync`](crate::tools::ToolSet::register_sync).
pub(crate) struct SyncTool<T>(pub(crate) T);

impl<T: Tool + Send + Sync> AsyncTool for SyncTool<T> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn description(&self) -> &str {
        self.0.description()
    }
    fn parameters(&self) -> Value {
        self.0.parameters()
    }
    fn key(&self, arguments: &Value) -> Option<String> {
        self.0.key(arguments)
    }
    fn key_part(&self, arguments: &Value) -> Option<KeyPart> {
        self.0.key_part(arguments)
    }
    fn call<'a>(&'a self, arguments: &'a Value) -> ToolFuture<'a> {
        Box::pin(std::future::ready(self.0.call(arguments)))
    }
}

/// A tool's declaration to the model: name, description and the JSON Schema of its
/// arguments, rendered in each provider's shape.
///
/// ```
/// use favur_context::tools::ToolDefinition;
/// let d = ToolDefinition::new("read_file", "Show a file", serde_json::json!({"type": "object"}))?;
/// assert_eq!(d.to_openai()["type"], "function");
/// assert_eq!(d.to_openai()["function"]["name"], "read_file");
/// assert_eq!(d.to_anthropic()["input_schema"]["type"], "object");
/// assert!(ToolDefinition::new("read file", "x", serde_json::json!({"type": "object"})).is_err());
/// # Ok::<(), favur_context::tools::ToolDefinitionError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    name: String,
    description: String,
    parameters: Value,
}

/// A tool declaration the providers would reject.
///
/// ```
/// let err = favur_context::tools::ToolDefinition::new("ls", "list", serde_json::json!(["path"])).unwrap_err();
/// assert_eq!(err.to_string(), "tool `ls`: its parameters must be a JSON Schema object with \"type\": \"object\", not [\"path\"]");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolDefinitionError {
    /// The name does not match `^[a-zA-Z0-9_-]{1,64}$`.
    #[error(
        "tool name {name:?} is not valid: OpenAI and Anthropic accept 1 to 64 ASCII letters, digits, `_` and `-`"
    )]
    Name {
        /// The name given.
        name: String,
    },
    /// The parameters are not an object schema.
    #[error(
        "tool `{name}`: its parameters must be a JSON Schema object with \"type\": \"object\", not {schema}"
    )]
    Schema {
        /// The tool's name.
        name: String,
        /// The schema given (compact JSON, cut at 200 bytes).
        schema: String,
    },
}

impl ToolDefinition {
    /// A checked definition.
    ///
    /// # Errors
    ///
    /// [`ToolDefinitionError`] if the name or the schema breaks the providers' rules.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
    ) -> Result<Self, ToolDefinitionError> {
        let name = name.into();
        let valid_name = (1..=64).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid_name {
            return Err(ToolDefinitionError::Name { name });
        }
        if parameters.get("type").and_then(Value::as_str) != Some("object") {
            let mut schema = parameters.to_string();
            if schema.len() > 200 {
                let mut cut = 200;
                while !schema.is_char_boundary(cut) {
                    cut -= 1;
                }
                schema.truncate(cut);
                schema.push('…');
            }
            return Err(ToolDefinitionError::Schema { name, schema });
        }
        Ok(ToolDefinition {
            name,
            description: description.into(),
            parameters,
        })
    }

    /// A definition known to be valid (the library's own tools).
    pub(crate) fn trusted(name: &str, description: &str, parameters: Value) -> Self {
        ToolDefinition {
            name: name.to_owned(),
            description: description.to_owned(),
            parameters,
        }
    }

    /// The definition of `tool`, checked.
    ///
    /// # Errors
    ///
    /// As for [`new`](ToolDefinition::new).
    pub fn of(tool: &(impl AsyncTool + ?Sized)) -> Result<Self, ToolDefinitionError> {
        ToolDefinition::new(tool.name(), tool.description(), tool.parameters())
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The JSON Schema of the arguments.
    pub fn parameters(&self) -> &Value {
        &self.parameters
    }

    /// OpenAI Chat Completions: `{"type": "function", "function": {"name", "description",
    /// "parameters"}}`, an element of the request's `tools` array.
    pub fn to_openai(&self) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }
        })
    }

    /// Anthropic Messages: `{"name", "description", "input_schema"}`, an element of the
    /// request's `tools` array.
    pub fn to_anthropic(&self) -> Value {
        json!({
            "name": self.name,
            "description": self.description,
            "input_schema": self.parameters,
        })
    }
}

/// `classified` with the key and the part a tool gives the result of a call with
/// `arguments`, if any.
pub(crate) fn keyed(
    classified: Classified,
    key: Option<String>,
    part: Option<KeyPart>,
) -> Classified {
    match (key, part) {
        (Some(key), Some(part)) => classified.with_key(key).with_key_part(part),
        (Some(key), None) => classified.with_key(key),
        (None, _) => classified,
    }
}
