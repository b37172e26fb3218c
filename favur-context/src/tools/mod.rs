//! Tools out: the registry that dispatches calls by name and declares tools to providers,
//! and the recall tool (the tool traits themselves are in `model::tool`).

pub(crate) mod recall;
pub(crate) mod toolset;

pub use crate::model::tool::{
    AsyncTool, ClassifiedAsyncTool, ClassifiedTool, Tool, ToolDefinition, ToolDefinitionError,
    ToolFuture,
};
pub use recall::RecallTool;
pub use toolset::{ToolSet, ToolSetError};
