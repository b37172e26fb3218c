//! The message extension keys the library keeps for itself: written by an import or a
//! reply, read by a renderer, never sent as they are.

/// Extension keys starting with this are the library's own bookkeeping (e.g. the
/// engine's `favur_kind` on summaries) and are never rendered.
///
/// ```
/// use favur_context::{History, Message, Retention};
/// let mut h = History::new();
/// h.append(Message::user("hi").with_extension("favur_note", serde_json::json!(1)).classify(Retention::Strict));
/// assert_eq!(favur_context::render::render_openai(&h)[0], serde_json::json!({"role": "user", "content": "hi"}));
/// assert_eq!(favur_context::render::INTERNAL_EXTENSION_PREFIX, "favur_");
/// ```
pub const INTERNAL_EXTENSION_PREFIX: &str = "favur_";

/// The extension holding the ids of an assistant message's `message` items, in order.
pub const ITEM_IDS_EXTENSION: &str = "favur_item_ids";

/// The message extension an import sets on a model turn whose Gemini calls had no ids
/// (the ids it holds were synthesized): such calls, and their responses, are rendered
/// without `id`, as they came.
pub(crate) const SYNTHESIZED_IDS: &str = "favur_gemini_synthesized_ids";
