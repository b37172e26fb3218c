//! Tools out: the tool traits (a tool carries its class), the registry that dispatches
//! calls by name and declares tools to providers, and the recall tool.

pub(crate) mod recall;
pub(crate) mod tool;
pub(crate) mod toolset;
