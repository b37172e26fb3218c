// `tool_calls: expr` takes any `IntoIterator<Item = ToolCall>`; anything else is reported
// at the expression.
use favur_context::{fuzzy, ToolCall};

fn main() {
    let names = vec!["read", "bash"];
    let _ = fuzzy!(tool_calls: names);
    let calls = vec![ToolCall::new("c1", "ls", "{}")];
    let _ = fuzzy!(tool_calls: &calls);
}
