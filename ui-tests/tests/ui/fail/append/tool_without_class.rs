use favur_context::{History, Tool, ToolCall};
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

fn main() {
    let mut history = History::new();
    history.run_tool(&Grep, &ToolCall::new("c1", "grep", "{}"));
}
