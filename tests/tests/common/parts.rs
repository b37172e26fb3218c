//! Short builders for multi-part messages (reasoning, text, calls, results, media), so a
//! test's turn reads as one list of parts: `assistant([thinking(..), text(..), call(..)])`.

use favur_context::message::{Arguments, Media, Part, Reasoning, ToolResult};
use favur_context::{History, Message, Retention, Role, ToolCall};

/// A text part.
pub fn text(text: impl Into<String>) -> Part {
    Part::Text(text.into())
}

/// A reasoning part (thinking, a summary, a signature or an encrypted payload).
pub fn thinking(reasoning: Reasoning) -> Part {
    Part::Reasoning(Box::new(reasoning))
}

/// A tool call part.
pub fn call(id: &str, name: &str, arguments: impl Into<Arguments>) -> Part {
    Part::ToolCall(Box::new(ToolCall::new(id, name, arguments)))
}

/// A successful tool result part for the call `call_id`.
pub fn result(call_id: &str, content: &str) -> Part {
    Part::ToolResult(ToolResult {
        call_id: call_id.into(),
        content: content.into(),
        is_error: false,
    })
}

/// An image part.
pub fn image(media: Media) -> Part {
    Part::Image(Box::new(media))
}

/// A document part.
pub fn document(media: Media) -> Part {
    Part::Document(Box::new(media))
}

/// A user message of these parts.
pub fn user(parts: impl IntoIterator<Item = Part>) -> Message {
    Message::new(Role::User, parts.into_iter().collect())
}

/// An assistant message of these parts.
pub fn assistant(parts: impl IntoIterator<Item = Part>) -> Message {
    Message::new(Role::Assistant, parts.into_iter().collect())
}

/// A tool message of these parts.
pub fn tool(parts: impl IntoIterator<Item = Part>) -> Message {
    Message::new(Role::Tool, parts.into_iter().collect())
}

/// A history of a strict user "go", then an assistant turn (`class`) of reasoning from
/// Anthropic (signature `SIG-A`) and from OpenAI (encrypted `ENC-O`), and `last`: what
/// only each provider's own format may carry.
pub fn after_reasoning_of_both(last: Part, class: Retention) -> History {
    let mut h = History::new();
    h.append(Message::user("go").classify(Retention::Strict));
    h.append(
        assistant([
            thinking(Reasoning::anthropic("think", "SIG-A")),
            thinking(Reasoning::openai("rs_1", ["summary"], Some("ENC-O".into()))),
            last,
        ])
        .classify(class),
    );
    h
}

/// The kind of each part of `m`, in order: `text`, `reasoning`, `call`, `result`,
/// `image` or `document`.
pub fn kinds(m: &Message) -> Vec<&'static str> {
    m.parts
        .iter()
        .map(|p| match p {
            Part::Text(_) => "text",
            Part::Reasoning(_) => "reasoning",
            Part::ToolCall(_) => "call",
            Part::ToolResult(_) => "result",
            Part::Image(_) => "image",
            Part::Document(_) => "document",
        })
        .collect()
}
