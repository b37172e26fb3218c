// The methods of a test tool, for the ui cases, which include this file with
// `#[path = "../../tool_methods.rs"] #[macro_use] mod tool_methods;`:
// `tool_methods!("name")` inside an `impl Tool` block (`tool_methods!("name", |args| result)`
// for another result), `tool_methods!(async "name")` inside an `impl AsyncTool` block.
// What a case tests is the attribute on the block or its absence, not these methods.

macro_rules! tool_methods {
    (async $name:literal) => {
        tool_methods!(@described $name);
        fn call<'a>(&'a self, _: &'a serde_json::Value) -> favur_context::tools::ToolFuture<'a> {
            Box::pin(async { Ok(String::new()) })
        }
    };
    ($name:literal) => {
        tool_methods!($name, |_arguments| Ok(String::new()));
    };
    ($name:literal, |$arguments:pat_param| $result:expr) => {
        tool_methods!(@described $name);
        fn call(&self, $arguments: &serde_json::Value) -> Result<String, String> {
            $result
        }
    };
    (@described $name:literal) => {
        fn name(&self) -> &str {
            $name
        }
        fn description(&self) -> &str {
            concat!("The `", $name, "` test tool")
        }
        fn parameters(&self) -> serde_json::Value {
            serde_json::json!({"type": "object"})
        }
    };
}
