use favur_context::{AsyncTool, Retention, ToolFuture, ToolSet};
use serde_json::Value;

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
    // A tool without a class cannot be registered: its results would have none.
    let _ = ToolSet::new(Retention::Fuzzy).with(Fetch);
}
