//! Requests: what each form of a view item sends (forms), the view rendered into provider
//! formats (render), and their validation.

pub(crate) mod forms;
#[cfg(any(feature = "async-openai", feature = "rig"))]
pub mod interop;
pub mod render;
pub mod validate;
