//! The neutral sequence as Anthropic Messages turns: content blocks, turns of one role
//! merged, tool ids rewritten to the characters the API accepts and made unique.
//!
//! Reasoning and media blocks are written by `anthropic_blocks`. When an assistant
//! message is merged into the assistant turn before it, its thinking blocks go after
//! the turn's leading thinking blocks (a thinking block precedes the text and tool uses
//! of its turn); everything else keeps its order.

use std::sync::LazyLock;

use foldhash::HashMap;

use serde_json::{Map, Value, json};

use super::FIRST_TURN_NOTE;
use super::anthropic_blocks::{leading_thinking, media_block, reasoning_block};
use super::neutral::{Out, Piece, UniqueIds, filled, filled_map, object, tool_name};
use crate::model::entry::Entry;
use crate::model::message::{Arguments, Role};

/// A pinned system entry as a `system` text block.
pub(super) fn system_block(entry: &Entry, text: String) -> Value {
    let mut block = Map::new();
    block.insert("type".into(), json!("text"));
    block.insert("text".into(), Value::String(text));
    if let Some(cc) = entry.message().extensions.get("cache_control") {
        block.insert("cache_control".into(), cc.clone());
    }
    Value::Object(block)
}

/// A `text` block holding `text`.
fn text_block(text: String) -> Value {
    static TEXT: LazyLock<Map<String, Value>> =
        LazyLock::new(|| template([("type", Value::from("text")), ("text", Value::Null)]));
    filled(&TEXT, [("text", Value::String(text))])
}

/// A turn of `role` (`"user"` or `"assistant"`) holding `blocks`.
fn turn(role: &'static str, blocks: Vec<Value>) -> Value {
    static USER: LazyLock<Map<String, Value>> =
        LazyLock::new(|| template([("role", Value::from("user")), ("content", Value::Null)]));
    static ASSISTANT: LazyLock<Map<String, Value>> =
        LazyLock::new(|| template([("role", Value::from("assistant")), ("content", Value::Null)]));
    let shape = if role == "assistant" {
        &ASSISTANT
    } else {
        &USER
    };
    filled(shape, [("content", Value::Array(blocks))])
}

/// The map [`object`] builds of `fields`, to clone.
fn template<const N: usize>(fields: [(&str, Value); N]) -> Map<String, Value> {
    match object(fields) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The id as Anthropic accepts it (`^[a-zA-Z0-9_-]+$`).
fn anthropic_id(id: &str) -> String {
    let accepted = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    if !id.is_empty() && id.bytes().all(accepted) {
        // Most ids already are (and the rewrite below gives them back unchanged).
        return id.to_owned();
    }
    if id.is_empty() {
        return "call".to_owned();
    }
    // One `_` per character not accepted: as many bytes as `id` has, or fewer.
    let mut s = String::with_capacity(id.len());
    s.extend(id.chars().map(|c| {
        if c.is_ascii() && accepted(c as u8) {
            c
        } else {
            '_'
        }
    }));
    s
}

pub(super) fn input(arguments: &Arguments) -> Value {
    match arguments {
        Arguments::Json(v @ Value::Object(_)) => v.clone(),
        Arguments::Json(v) => object([("arguments", v.clone())]),
        Arguments::Invalid(raw) => object([("arguments", Value::String(raw.clone()))]),
    }
}

/// Where [`Turns`] stood at some point, to go back to it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Mark {
    turns: usize,
    last_blocks: usize,
    /// The thinking blocks leading the last turn then.
    lead: usize,
    ids: usize,
}

impl Mark {
    /// The same point once a turn was put before the first.
    pub(super) fn after_note(self) -> Mark {
        Mark {
            turns: self.turns + 1,
            ..self
        }
    }
}

/// The turns built so far (`{"role", "content"}` messages), and the tool ids used.
#[derive(Debug, Default)]
pub(super) struct Turns {
    pub(super) messages: Vec<Value>,
    /// Every tool id used in the request.
    used: UniqueIds,
    /// Request ids of the calls of the last assistant turn, by their own id.
    current: HashMap<String, String>,
}

fn role_of(turn: &Value) -> Option<&str> {
    turn.get("role").and_then(Value::as_str)
}

fn blocks_of(turn: &mut Value) -> Option<&mut Vec<Value>> {
    turn.get_mut("content").and_then(Value::as_array_mut)
}

impl Turns {
    /// Adds one message of the neutral sequence: its blocks join the last turn if it has
    /// the same role.
    pub(super) fn push(&mut self, out: Out<'_>) {
        let (role, mut blocks, ext) = match out {
            Out::Msg(msg) => {
                let role = msg.role;
                let mut blocks = Vec::new();
                if role == Role::Assistant {
                    self.current.clear();
                }
                for piece in msg.pieces {
                    match piece {
                        Piece::Text(t) if t.trim().is_empty() => {}
                        Piece::Text(t) => {
                            blocks.push(text_block(t.into_owned()));
                        }
                        Piece::Call(k) => {
                            let Some(c) = msg.calls.get(k) else { continue };
                            let id = self.used.unique(&anthropic_id(&c.id));
                            self.current.insert(c.id.clone(), id.clone());
                            static TOOL_USE: LazyLock<Map<String, Value>> = LazyLock::new(|| {
                                template([
                                    ("type", Value::from("tool_use")),
                                    ("id", Value::Null),
                                    ("name", Value::Null),
                                    ("input", Value::Null),
                                ])
                            });
                            blocks.push(filled(
                                &TOOL_USE,
                                [
                                    ("id", Value::String(id)),
                                    ("name", Value::from(tool_name(&c.call.name))),
                                    ("input", input(&c.call.arguments)),
                                ],
                            ));
                        }
                        // Reasoning is only sent back in an assistant turn.
                        Piece::Reasoning(r) if role == Role::Assistant => {
                            blocks.extend(reasoning_block(&r));
                        }
                        Piece::Reasoning(_) => {}
                        media => blocks.extend(media_block(&media, role != Role::Assistant)),
                    }
                }
                let role = if role == Role::Assistant {
                    "assistant"
                } else {
                    "user"
                };
                (role, blocks, msg.ext)
            }
            Out::Res {
                id,
                content,
                is_error,
                media,
                ext,
            } => {
                let id = self
                    .current
                    .get(&id)
                    .cloned()
                    .unwrap_or_else(|| anthropic_id(&id));
                static TOOL_RESULT: LazyLock<Map<String, Value>> = LazyLock::new(|| {
                    template([
                        ("type", Value::from("tool_result")),
                        ("tool_use_id", Value::Null),
                    ])
                });
                let mut block = filled_map(&TOOL_RESULT, [("tool_use_id", Value::String(id))]);
                if media.is_empty() {
                    if !content.is_empty() {
                        block.insert("content".into(), Value::String(content.into_owned()));
                    }
                } else {
                    // What the tool returned besides its text, as blocks of its result.
                    let mut inner = Vec::new();
                    if !content.is_empty() {
                        inner.push(text_block(content.into_owned()));
                    }
                    inner.extend(media.iter().filter_map(|m| media_block(m, true)));
                    block.insert("content".into(), Value::Array(inner));
                }
                if is_error {
                    block.insert("is_error".into(), Value::Bool(true));
                }
                ("user", vec![Value::Object(block)], ext)
            }
        };
        if blocks.is_empty() {
            return;
        }
        if let (Some(cc), Some(Value::Object(last))) = (ext.get("cache_control"), blocks.last_mut())
        {
            last.insert("cache_control".into(), cc.clone());
        }
        match self.messages.last_mut() {
            Some(turn) if role_of(turn) == Some(role) => {
                if let Some(existing) = blocks_of(turn) {
                    // Thinking blocks go after the turn's leading ones (see the module).
                    let lead = leading_thinking(&blocks);
                    let at = leading_thinking(existing);
                    existing.splice(at..at, blocks.drain(..lead));
                    existing.append(&mut blocks);
                }
            }
            _ => self.messages.push(turn(role, blocks)),
        }
    }

    /// Puts a user turn with [`FIRST_TURN_NOTE`] first if the first turn is the
    /// assistant's (the API requires a user turn first); whether it did.
    pub(super) fn finish(&mut self) -> bool {
        let assistant_first = self
            .messages
            .first()
            .is_some_and(|t| role_of(t) == Some("assistant"));
        if assistant_first {
            self.messages.insert(
                0,
                json!({"role": "user", "content": [{"type": "text", "text": FIRST_TURN_NOTE}]}),
            );
        }
        assistant_first
    }

    /// Where the turns stand now.
    pub(super) fn mark(&mut self) -> Mark {
        let (last_blocks, lead) = self
            .messages
            .last_mut()
            .and_then(blocks_of)
            .map_or((0, 0), |b| (b.len(), leading_thinking(b)));
        Mark {
            turns: self.messages.len(),
            last_blocks,
            lead,
            ids: self.used.mark(),
        }
    }

    /// Back to where they stood at `mark` (taken since nothing before it changed).
    pub(super) fn reset(&mut self, mark: Mark) {
        self.messages.truncate(mark.turns);
        if let Some(blocks) = self.messages.last_mut().and_then(blocks_of) {
            // Thinking blocks put among the leading ones since, then what was appended.
            let lead = leading_thinking(blocks).max(mark.lead);
            blocks.drain(mark.lead.min(blocks.len())..lead.min(blocks.len()));
            blocks.truncate(mark.last_blocks);
        }
        self.used.reset(mark.ids);
        self.current.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::anthropic_id;

    #[test]
    fn ids_are_rewritten_to_what_anthropic_accepts() {
        assert_eq!(anthropic_id("call_1-x"), "call_1-x");
        assert_eq!(anthropic_id("same/id"), "same_id");
        assert_eq!(anthropic_id("a.b c"), "a_b_c");
        // One `_` per character, not per byte.
        assert_eq!(anthropic_id("é1"), "_1");
        assert_eq!(anthropic_id(""), "call");
    }
}
