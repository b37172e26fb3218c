use favur_context::{AsyncTool, History, Retention, Tool, ToolCall, ToolFuture, ToolSet};
use serde_json::Value;

struct Grep;

impl Tool for Grep {
    fn name(&self) -> &str {
        "grep"
    }
    fn description(&self) -> &str {
        "Search files"
    }
    fn parameters(&self) -> Value {
        Value::Null
    }
    fn call(&self, _: &Value) -> Result<String, String> {
        Ok(String::new())
    }
}

struct Fetch;

impl AsyncTool for Fetch {
    fn name(&self) -> &str {
        "fetch"
    }
    fn description(&self) -> &str {
        "Fetch a URL"
    }
    fn parameters(&self) -> Value {
        serde_json::json!({"type": "object"})
    }
    fn call<'a>(&'a self, _: &'a Value) -> ToolFuture<'a> {
        Box::pin(async { Ok(String::new()) })
    }
}

fn main() {
    let mut history = History::new();
    history.run_tool(&Grep, &ToolCall::new("c1", "grep", "{}"));

    // A tool without a class cannot be registered: its results would have none.
    let _ = ToolSet::new(Retention::Fuzzy).with(Fetch);
}
