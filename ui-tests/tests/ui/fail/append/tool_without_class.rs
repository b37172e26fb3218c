use favur_context::{tools::{AsyncTool, Tool, ToolSet}, History, Retention, ToolCall};

#[path = "../../tool_methods.rs"]
#[macro_use]
mod tool_methods;

struct Grep;

impl Tool for Grep {
    tool_methods!("grep");
}

struct Fetch;

impl AsyncTool for Fetch {
    tool_methods!(async "fetch");
}

fn main() {
    let mut history = History::new();
    history.run_tool(&Grep, &ToolCall::new("c1", "grep", "{}"));

    // A tool without a class cannot be registered: its results would have none.
    let _ = ToolSet::new(Retention::Fuzzy).with(Fetch);
}
