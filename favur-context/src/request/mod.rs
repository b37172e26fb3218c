//! Requests: the view rendered into provider formats (render), their validation, and
//! conversions to other crates' request types (interop). What each form of a view item
//! sends is one floor down, in `sent`.

#[cfg(any(feature = "async-openai", feature = "rig"))]
pub mod interop;
pub mod render;
pub mod validate;
