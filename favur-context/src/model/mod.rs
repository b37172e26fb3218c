//! The message model: what a message is, its retention class and the call site that gave
//! it, the entry a history records, the ways a message gets its class, and the tool
//! traits (a tool carries the class of its results).

pub(crate) mod classify;
pub(crate) mod entry;
mod entry_id;
mod entry_kind;
pub(crate) mod extensions;
pub mod kinds;
pub(crate) mod message;
pub(crate) mod part_check;
pub(crate) mod parts;
pub(crate) mod retention;
pub(crate) mod site;
pub(crate) mod tool;
