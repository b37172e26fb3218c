//! Tools whose results are classified by the tool's own `#[retention(...)]`.

use serde_json::Value;

use crate::retention::Retention;

/// A tool an agent exposes to its model.
///
/// Mark the impl with `#[retention(...)]` so that every result the tool produces is
/// appended with that class (see [`History::run_tool`](crate::History::run_tool)).
///
/// ```
/// use favur_context::{retention, Tool};
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
}

/// A [`Tool`] whose results carry a retention class, declared with `#[retention(...)]` on
/// its `impl Tool` block.
///
/// ```
/// use favur_context::{retention, ClassifiedTool, Retention, Tool};
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
#[diagnostic::on_unimplemented(
    message = "tool `{Self}` has no retention class",
    label = "the results of this tool would have no retention class",
    note = "mark its `impl Tool for {Self}` block with `#[retention(forgettable)]`, `#[retention(fuzzy)]` or `#[retention(strict)]`"
)]
pub trait ClassifiedTool: Tool {
    /// The class of every result this tool produces.
    const RETENTION: Retention;
}
