//! Reasoning and media as Anthropic content blocks: `thinking` (with its `signature`),
//! `redacted_thinking` (its `data`), `image` and `document` blocks with `base64`, `url`
//! or `file` sources.
//!
//! Only Anthropic's own reasoning is sent (a signature or payload from another provider
//! means nothing to Anthropic); images and documents are blocks in user turns and tool
//! results, and a text note elsewhere (an assistant turn cannot carry one).

use serde_json::{Map, Value, json};

use super::neutral::Piece;
use super::openai::media_note;
use crate::model::parts::{Media, MediaSource, Provider, Reasoning};
use crate::request::validate::{DOCUMENT_MEDIA_TYPES, IMAGE_MEDIA_TYPES};

/// The block of a reasoning part, if it is Anthropic's and can be sent back: a thinking
/// block without its signature (a stream cut before its `signature_delta`) cannot, and
/// is left out.
pub(super) fn reasoning_block(r: &Reasoning) -> Option<Value> {
    if r.provider != Provider::Anthropic {
        return None;
    }
    Some(match &r.encrypted {
        Some(data) => json!({"type": "redacted_thinking", "data": data}),
        None => json!({
            "type": "thinking",
            "thinking": r.joined_text(),
            "signature": r.signature.as_deref().filter(|s| !s.is_empty())?,
        }),
    })
}

/// A media source as Anthropic writes it.
fn source(media: &Media) -> Value {
    match &media.source {
        MediaSource::Base64 { data } => {
            json!({"type": "base64", "media_type": media.media_type, "data": data})
        }
        MediaSource::Url { url } => json!({"type": "url", "url": url}),
        MediaSource::File { file_id } => json!({"type": "file", "file_id": file_id}),
    }
}

/// The block of a media piece where media can go (user turns, tool results), or its note.
pub(super) fn media_block(piece: &Piece<'_>, in_user_turn: bool) -> Option<Value> {
    let (media, kind) = match piece {
        Piece::Image(m) => (m, "image"),
        Piece::Document(m) => (m, "document"),
        _ => return None,
    };
    let accepted: &[&str] = if kind == "image" {
        &IMAGE_MEDIA_TYPES
    } else {
        &DOCUMENT_MEDIA_TYPES
    };
    let base64 = matches!(media.source, MediaSource::Base64 { .. });
    if !in_user_turn || (base64 && !accepted.contains(&media.media_type.as_str())) {
        return media_note(piece).map(|note| json!({"type": "text", "text": note}));
    }
    let mut block = Map::new();
    block.insert("type".into(), json!(kind));
    block.insert("source".into(), source(media));
    if let (Some(name), "document") = (&media.name, kind) {
        block.insert("title".into(), json!(name));
    }
    Some(Value::Object(block))
}

/// Whether a block is a thinking or redacted thinking block.
pub(super) fn is_thinking(block: &Value) -> bool {
    matches!(
        block.get("type").and_then(Value::as_str),
        Some("thinking" | "redacted_thinking")
    )
}

/// How many blocks lead `blocks` that are thinking blocks.
pub(super) fn leading_thinking(blocks: &[Value]) -> usize {
    blocks.iter().take_while(|b| is_thinking(b)).count()
}
