//! The neutral sequence as Anthropic Messages turns: content blocks, turns of one role
//! merged, tool ids rewritten to the characters the API accepts and made unique.
//!
//! Reasoning and media blocks are written by `anthropic_blocks`. When an assistant
//! message is merged into the assistant turn before it, its thinking blocks go after
//! the turn's leading thinking blocks (a thinking block precedes the text and tool uses
//! of its turn); everything else keeps its order.

use std::borrow::Cow;
use std::sync::LazyLock;

use foldhash::HashMap;

use serde_json::{Map, Value, json};

use super::FIRST_TURN_NOTE;
use super::anthropic_blocks::{leading_thinking, media_block, reasoning_block};
use super::neutral::{
    Msg, Out, OutCall, Piece, SPARE, SPARE_TEXT, UniqueIds, filled, filled_map, object, refill,
    tool_name,
};
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

/// The most blocks a vector [`Spare`] keeps has room for.
const SPARE_BLOCKS: usize = 16;

/// Turns, text blocks and tool results a [`Turns::reset`] took off, emptied, to build the
/// next ones in: a turn reused keeps its map and keys, a block its map, keys and text buffer,
/// so a request rendered after a compaction allocates (and frees) little. At most
/// [`SPARE`] of each are kept, with text buffers of at most [`SPARE_TEXT`] bytes and
/// vectors with room for at most [`SPARE_BLOCKS`] blocks.
#[derive(Debug, Default)]
struct Spare {
    /// `{"role", "content"}` maps, `content` taken out (null).
    turns: Vec<Map<String, Value>>,
    /// Empty `content` vectors, their room kept.
    blocks: Vec<Vec<Value>>,
    /// `{"type": "text", "text"}` maps, `text` an empty string.
    texts: Vec<Map<String, Value>>,
    /// `{"type": "tool_result", "tool_use_id", "content"}` maps, `content` a string.
    results: Vec<Map<String, Value>>,
}

impl Spare {
    /// Keeps what `turn` is made of, as far as it is a turn this module builds.
    fn retire_turn(&mut self, turn: Value) {
        let Value::Object(mut map) = turn else {
            return;
        };
        if let Some(Value::Array(mut blocks)) = map.get_mut("content").map(Value::take) {
            for block in blocks.drain(..) {
                self.retire_block(block);
            }
            self.retire_blocks(blocks);
        }
        let shaped = map.len() == 2
            && map.contains_key("content")
            && matches!(map.get("role"), Some(Value::String(_)));
        if shaped && self.turns.len() < SPARE {
            self.turns.push(map);
        }
    }

    /// Keeps the empty vector `blocks` if it is of a size worth keeping.
    fn retire_blocks(&mut self, blocks: Vec<Value>) {
        if blocks.capacity() <= SPARE_BLOCKS && self.blocks.len() < SPARE {
            self.blocks.push(blocks);
        }
    }

    /// Keeps `block` if it is a text block or a tool result with text content, of a size
    /// worth keeping.
    fn retire_block(&mut self, block: Value) {
        let Value::Object(mut map) = block else {
            return;
        };
        let (kept, field) = match map.get("type") {
            Some(Value::String(t)) if t == "text" && map.len() == 2 => (&mut self.texts, "text"),
            Some(Value::String(t))
                if t == "tool_result"
                    && map.len() == 3
                    && matches!(map.get("tool_use_id"), Some(Value::String(_))) =>
            {
                (&mut self.results, "content")
            }
            _ => return,
        };
        if kept.len() >= SPARE {
            return;
        }
        if let Some(Value::String(text)) = map.get_mut(field)
            && text.capacity() <= SPARE_TEXT
        {
            text.clear();
            kept.push(map);
        }
    }

    /// A `text` block holding `text`, in a kept one if there is one.
    fn text_block(&mut self, text: Cow<'_, str>) -> Value {
        let Some(mut map) = self.texts.pop() else {
            return text_block(text.into_owned());
        };
        if let Some(Value::String(buffer)) = map.get_mut("text") {
            refill(buffer, text);
        }
        Value::Object(map)
    }

    /// An empty vector for a turn's blocks.
    fn blocks(&mut self) -> Vec<Value> {
        self.blocks.pop().unwrap_or_default()
    }

    /// A turn of `role` holding `blocks`, in a kept one if there is one.
    fn turn(&mut self, role: &'static str, blocks: Vec<Value>) -> Value {
        let Some(mut map) = self.turns.pop() else {
            return turn(role, blocks);
        };
        if let Some(Value::String(r)) = map.get_mut("role") {
            refill(r, Cow::Borrowed(role));
        }
        if let Some(content) = map.get_mut("content") {
            *content = Value::Array(blocks);
        }
        Value::Object(map)
    }
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
    /// How many turns there were at this point (the last of them may still grow).
    pub(super) fn turns(self) -> usize {
        self.turns
    }

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
    /// What was taken off, to build in again.
    spare: Spare,
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
        let (role, blocks, ext) = match out {
            Out::Msg(msg) => {
                let ext = msg.ext;
                let (role, blocks) = self.message_blocks(msg);
                (role, blocks, ext)
            }
            Out::Res {
                id,
                content,
                is_error,
                media,
                ext,
            } => {
                let block = self.result_block(id, content, is_error, &media);
                let mut blocks = self.spare.blocks();
                blocks.push(Value::Object(block));
                ("user", blocks, ext)
            }
        };
        self.join(role, blocks, ext);
    }

    /// A message's role in the request (`"assistant"` or `"user"`) and its blocks.
    fn message_blocks(&mut self, msg: Msg<'_>) -> (&'static str, Vec<Value>) {
        let role = msg.role;
        let mut blocks = self.spare.blocks();
        if role == Role::Assistant {
            self.current.clear();
        }
        for piece in msg.pieces {
            match piece {
                Piece::Text(t) if t.trim().is_empty() => {}
                Piece::Text(t) => {
                    blocks.push(self.spare.text_block(t));
                }
                Piece::Call(k) => {
                    let Some(c) = msg.calls.get(k) else { continue };
                    blocks.push(self.tool_use(c));
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
        (role, blocks)
    }

    /// A `tool_use` block for a call, under an id unique in the request (remembered for
    /// the results that answer it).
    fn tool_use(&mut self, c: &OutCall<'_>) -> Value {
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
        filled(
            &TOOL_USE,
            [
                ("id", Value::String(id)),
                ("name", Value::from(tool_name(&c.call.name))),
                ("input", input(&c.call.arguments)),
            ],
        )
    }

    /// The `tool_result` block answering the call `id` (its request id if the call was in
    /// the last assistant turn): text only is built in a kept block if there is one.
    fn result_block(
        &mut self,
        id: String,
        content: Cow<'_, str>,
        is_error: bool,
        media: &[Piece<'_>],
    ) -> Map<String, Value> {
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
        let plain = media.is_empty() && !content.is_empty() && !is_error;
        if plain && let Some(mut block) = self.spare.results.pop() {
            if let Some(Value::String(buffer)) = block.get_mut("tool_use_id") {
                *buffer = id;
            }
            if let Some(Value::String(buffer)) = block.get_mut("content") {
                refill(buffer, content);
            }
            return block;
        }
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
        block
    }

    /// Adds `blocks` as a `role` turn, or to the last turn if it has that role (thinking
    /// blocks after its leading ones); the message's `cache_control` goes on its last block.
    fn join(&mut self, role: &'static str, mut blocks: Vec<Value>, ext: &Map<String, Value>) {
        if blocks.is_empty() {
            self.spare.retire_blocks(blocks);
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
                self.spare.retire_blocks(blocks);
            }
            _ => {
                let turn = self.spare.turn(role, blocks);
                self.messages.push(turn);
            }
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

    /// No turns, as [`Turns::default`] has, keeping what they were built of to build in
    /// again.
    pub(super) fn restart(&mut self) {
        for turn in self.messages.drain(..) {
            self.spare.retire_turn(turn);
        }
        self.used = UniqueIds::default();
        self.current.clear();
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
        for turn in self.messages.drain(mark.turns.min(self.messages.len())..) {
            self.spare.retire_turn(turn);
        }
        if let Some(blocks) = self.messages.last_mut().and_then(blocks_of) {
            // Thinking blocks put among the leading ones since, then what was appended.
            let lead = leading_thinking(blocks).max(mark.lead);
            blocks.drain(mark.lead.min(blocks.len())..lead.min(blocks.len()));
            for block in blocks.drain(mark.last_blocks.min(blocks.len())..) {
                self.spare.retire_block(block);
            }
        }
        self.used.reset(mark.ids);
        self.current.clear();
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use serde_json::json;

    use super::{SPARE_TEXT, Spare, anthropic_id};

    #[test]
    fn kept_turns_and_text_blocks_are_built_again_as_new_ones_are() {
        let mut spare = Spare::default();
        spare.retire_turn(json!({"role": "assistant", "content": [
            {"type": "text", "text": "an old text"},
            {"type": "tool_use", "id": "c1", "name": "bash", "input": {}},
        ]}));
        // The turn, its vector and its text block are kept; the tool use is not.
        assert_eq!(
            (spare.turns.len(), spare.blocks.len(), spare.texts.len()),
            (1, 1, 1)
        );
        let mut blocks = spare.blocks();
        assert!(blocks.is_empty());
        blocks.push(spare.text_block(Cow::Borrowed("new")));
        blocks.push(spare.text_block(Cow::Owned("made".into())));
        let turn = spare.turn("user", blocks);
        assert_eq!(
            turn,
            json!({"role": "user", "content": [
                {"type": "text", "text": "new"},
                {"type": "text", "text": "made"},
            ]})
        );
        assert_eq!(
            (spare.turns.len(), spare.blocks.len(), spare.texts.len()),
            (0, 0, 0)
        );
        assert_eq!(
            spare.turn("assistant", Vec::new()),
            json!({"role": "assistant", "content": []})
        );
    }

    #[test]
    fn a_kept_tool_result_is_built_again_as_a_new_one_is() {
        use crate::request::render::neutral::{Out, empty_map};
        let result = |id: &str, content: &'static str, is_error: bool| Out::Res {
            id: id.into(),
            content: Cow::Borrowed(content),
            is_error,
            media: Vec::new(),
            ext: empty_map(),
        };
        let fresh = |out| {
            let mut turns = super::Turns::default();
            turns.push(out);
            turns.messages
        };
        let mut turns = super::Turns::default();
        turns.spare.retire_turn(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "old", "content": "old output"},
            {"type": "tool_result", "tool_use_id": "e", "content": "x", "is_error": true},
        ]}));
        assert_eq!(turns.spare.results.len(), 1);
        turns.push(result("c1", "ok", false));
        assert!(turns.spare.results.is_empty());
        assert_eq!(turns.messages, fresh(result("c1", "ok", false)));
        // An error result is built afresh, the kept one left.
        let mut turns = super::Turns::default();
        turns
            .spare
            .retire_block(json!({"type": "tool_result", "tool_use_id": "o", "content": "o"}));
        turns.push(result("c2", "failed", true));
        assert_eq!(turns.messages, fresh(result("c2", "failed", true)));
        assert_eq!(turns.messages[0]["content"][0]["is_error"], true);
        assert_eq!(turns.spare.results.len(), 1);
    }

    #[test]
    fn only_blocks_of_a_kept_shape_and_size_are_kept() {
        let mut spare = Spare::default();
        spare.retire_block(json!({"type": "text", "text": "x".repeat(SPARE_TEXT + 1)}));
        spare.retire_block(
            json!({"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}),
        );
        spare.retire_block(json!({"type": "thinking", "text": "a"}));
        spare.retire_block(
            json!({"type": "tool_result", "tool_use_id": "c", "content": [], "x": 1}),
        );
        spare.retire_block(json!({"type": "tool_result", "tool_use_id": "c", "content": []}));
        spare.retire_block(json!("not a block"));
        spare.retire_turn(json!({"role": "user", "content": "a", "extra": 1}));
        spare.retire_turn(json!({"role": "user", "parts": []}));
        spare.retire_blocks(Vec::with_capacity(1_000));
        assert_eq!(
            (spare.turns.len(), spare.blocks.len(), spare.texts.len()),
            (0, 0, 0)
        );
        assert!(spare.results.is_empty());
    }

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
