//! Requests: what each form of a view item sends (forms), the view rendered into provider
//! formats (render), and their validation.

#[cfg(feature = "async-openai")]
pub mod interop;
pub mod render;
pub mod validate;
