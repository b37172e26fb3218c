//! What a message is made of, besides the root's [`Message`](crate::Message),
//! [`Role`](crate::Role), [`ToolCall`](crate::ToolCall), [`Retention`](crate::Retention)
//! and [`Entry`](crate::Entry): its parts and media, their checks and token estimates, the
//! call site that classified it, the compile-time classes ([`class`]) and the ready-made
//! [`kinds`].

pub use crate::model::classify::{KEY_EXTENSION, KEY_PART_EXTENSION, KeyPart, ParseKeyPartError};
pub use crate::model::entry::EntryKind;
pub use crate::model::kinds;
pub use crate::model::message::{Arguments, CallIdError, Part, ToolResult};
pub use crate::model::part_check::{PartError, check_part};
pub use crate::model::parts::{
    DOCUMENT_TOKENS, IMAGE_TOKENS, MIN_DOCUMENT_TOKENS, Media, MediaSource, Provider, Reasoning,
};
pub use crate::model::retention::{ParseRetentionError, class};
pub use crate::model::site::CallSite;
