//! `#[retention]` on `impl AsyncTool for T` classifies the tool; a `ToolSet` takes it.
use favur_context::{AsyncTool, ClassifiedAsyncTool, Retention, ToolFuture, ToolSet, retention};
use serde_json::Value;

struct Fetch;

#[retention(forgettable)]
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

struct Wrap<T>(T);

#[retention(strict)]
impl<T: Send + Sync> AsyncTool for Wrap<T> {
    fn name(&self) -> &str {
        "wrap"
    }
    fn description(&self) -> &str {
        "A generic tool"
    }
    fn parameters(&self) -> Value {
        serde_json::json!({"type": "object"})
    }
    fn call<'a>(&'a self, _: &'a Value) -> ToolFuture<'a> {
        Box::pin(async { Ok(String::new()) })
    }
}

fn main() {
    assert_eq!(<Fetch as ClassifiedAsyncTool>::RETENTION, Retention::Forgettable);
    assert_eq!(<Wrap<u8> as ClassifiedAsyncTool>::RETENTION, Retention::Strict);
    let tools = ToolSet::new(Retention::Fuzzy).with(Fetch).unwrap().with(Wrap(1u8)).unwrap();
    assert_eq!(tools.retention_of("wrap"), Some(Retention::Strict));
}
