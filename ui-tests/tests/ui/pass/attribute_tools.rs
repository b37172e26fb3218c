#![deny(warnings)]
// `#[retention]` on `impl Tool for T`, also generic, and the tool-bound history methods.
use favur_context::{retention, ClassifiedTool, History, Retention, Tool, ToolCall};
use serde_json::{json, Value};

struct ListDir;

#[retention(forgettable)]
impl Tool for ListDir {
    fn name(&self) -> &str {
        "list_dir"
    }
    fn description(&self) -> &str {
        "List a directory"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    fn call(&self, _arguments: &Value) -> Result<String, String> {
        Ok("Cargo.toml\nsrc/".into())
    }
}

struct Echo<T>(T);

#[retention(strict)]
impl<T: Sync> favur_context::Tool for Echo<T> {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echo the arguments"
    }
    fn parameters(&self) -> Value {
        json!({})
    }
    fn call(&self, arguments: &Value) -> Result<String, String> {
        Err(arguments.to_string())
    }
}

fn main() {
    assert_eq!(<ListDir as ClassifiedTool>::RETENTION, Retention::Forgettable);
    assert_eq!(<Echo<()> as ClassifiedTool>::RETENTION, Retention::Strict);

    let mut history = History::new();
    let a = history.run_tool(&ListDir, &ToolCall::new("c1", "list_dir", json!({})));
    let b = history.run_tool(&Echo(()), &ToolCall::new("c2", "echo", json!({"x": 1})));
    let c = history.append_tool_result(&ListDir, "c3", Ok("README.md".into()));

    assert_eq!(history.recall(a).unwrap().retention(), Retention::Forgettable);
    let echo = history.recall(b).unwrap();
    assert_eq!(echo.retention(), Retention::Strict);
    assert!(echo.message().tool_results().next().unwrap().is_error);
    assert_eq!(history.recall(c).unwrap().retention(), Retention::Forgettable);
}
