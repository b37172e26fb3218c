//! Tools out: the tool traits (a tool carries the class of its results), the registry that
//! dispatches calls by name and declares tools to providers, and the recall tool.

pub(crate) mod recall;
pub(crate) mod toolset;

pub use crate::model::tool::{
    AsyncTool, ClassifiedAsyncTool, ClassifiedTool, Tool, ToolDefinition, ToolDefinitionError,
    ToolFuture,
};
pub use recall::RecallTool;
pub use toolset::{ToolSet, ToolSetError};
