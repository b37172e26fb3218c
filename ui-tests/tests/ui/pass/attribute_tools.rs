#![deny(warnings)]
// `#[retention]` on `impl Tool for T` and `impl AsyncTool for T`, also generic, the
// tool-bound history methods, and a `ToolSet` taking the classified async tools.
use favur_context::tools::{
    AsyncTool, ClassifiedAsyncTool, ClassifiedTool, Tool, ToolSet,
};
use favur_context::{retention, History, Retention, ToolCall};
use serde_json::json;

#[path = "../tool_methods.rs"]
#[macro_use]
mod tool_methods;

struct ListDir;

#[retention(forgettable)]
impl Tool for ListDir {
    tool_methods!("list_dir", |_| Ok("Cargo.toml\nsrc/".into()));
}

struct Echo<T>(T);

#[retention(strict)]
impl<T: Sync> favur_context::tools::Tool for Echo<T> {
    tool_methods!("echo", |arguments| Err(arguments.to_string()));
}

struct Fetch;

#[retention(forgettable)]
impl AsyncTool for Fetch {
    tool_methods!(async "fetch");
}

struct Wrap<T>(T);

#[retention(strict)]
impl<T: Send + Sync> AsyncTool for Wrap<T> {
    tool_methods!(async "wrap");
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

    assert_eq!(<Fetch as ClassifiedAsyncTool>::RETENTION, Retention::Forgettable);
    assert_eq!(<Wrap<u8> as ClassifiedAsyncTool>::RETENTION, Retention::Strict);
    let tools = ToolSet::new(Retention::Fuzzy).with(Fetch).unwrap().with(Wrap(1u8)).unwrap();
    assert_eq!(tools.retention_of("wrap"), Some(Retention::Strict));
}
