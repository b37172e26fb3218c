//! Test tools in one line each: `tool!(Name: class, "name", "description", parameters,
//! |arguments| body)` (then, optionally, `key: |arguments| key` for the tool's
//! supersession key) defines a unit struct and its `#[retention(class)]` impl of
//! [`Tool`](favur_context::tools::Tool) (or, with `async`, of
//! [`AsyncTool`](favur_context::tools::AsyncTool), the body inside the returned future).

/// Defines a classified test tool (see the module docs).
#[allow(unused_macros)]
macro_rules! tool {
    ($name:ident: $class:ident, $tool:literal, $description:literal, $parameters:expr, |$args:pat_param| $body:expr $(, key: |$key_args:ident| $key:expr)? $(,)?) => {
        $crate::common::tool!(@impl $name, $class, favur_context::tools::Tool, $tool, $description, $parameters, {
            fn call(&self, $args: &serde_json::Value) -> Result<String, String> {
                $body
            }
            $(
                fn key(&self, $key_args: &serde_json::Value) -> Option<String> {
                    $key
                }
            )?
        });
    };
    (async $name:ident: $class:ident, $tool:literal, $description:literal, $parameters:expr, |$args:ident| $body:expr) => {
        $crate::common::tool!(@impl $name, $class, favur_context::tools::AsyncTool, $tool, $description, $parameters, {
            fn call<'a>(&'a self, $args: &'a serde_json::Value) -> favur_context::tools::ToolFuture<'a> {
                Box::pin(async move { $body })
            }
        });
    };
    (@impl $name:ident, $class:ident, $trait:path, $tool:literal, $description:literal, $parameters:expr, { $($call:item)* }) => {
        struct $name;

        #[favur_context::retention($class)]
        impl $trait for $name {
            fn name(&self) -> &str {
                $tool
            }
            fn description(&self) -> &str {
                $description
            }
            fn parameters(&self) -> serde_json::Value {
                $parameters
            }
            $($call)*
        }
    };
}
#[allow(unused_imports)]
pub(crate) use tool;
