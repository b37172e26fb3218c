//! The message model: what a message is, its retention class and the call site that gave
//! it, the entry a history records, and the ways a message gets its class.

pub(crate) mod classify;
pub(crate) mod entry;
mod entry_kind;
pub mod kinds;
pub(crate) mod message;
pub(crate) mod parts;
pub(crate) mod retention;
pub(crate) mod site;
