//! The blocks of a rendered request (the `system` value, then each message), each
//! measured once per replay: its token weight, its identifiers and its text.

use std::collections::HashMap;
use std::collections::HashSet;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use favur_context::tokens::{HeuristicCounter, TokenCounter};
use serde_json::Value;

use crate::idents::{identifiers, presence_keys};

/// Every string of `v`, each followed by a newline (what a block's weight is counted from).
pub(crate) fn collect_strings(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|i| collect_strings(i, out)),
        Value::Object(map) => map.values().for_each(|i| collect_strings(i, out)),
        _ => {}
    }
}

/// The blocks of a rendered request: `system` (if any) then each message.
fn blocks(request: &Value) -> Vec<&Value> {
    match request {
        Value::Array(items) => items.iter().collect(),
        Value::Object(map) => {
            // Anthropic (`system`, `messages`), Gemini (`systemInstruction`, `contents`),
            // Responses (`input`): the system value first, then each message or item.
            let mut out = Vec::new();
            for key in ["system", "systemInstruction"] {
                if let Some(system) = map.get(key) {
                    out.push(system);
                }
            }
            for key in ["messages", "contents", "input"] {
                if let Some(Value::Array(items)) = map.get(key) {
                    out.extend(items.iter());
                }
            }
            out
        }
        other => vec![other],
    }
}

/// One block, measured.
pub(crate) struct BlockInfo {
    /// Its weight: the heuristic count of its strings plus the framing tokens.
    pub(crate) weight: u64,
    /// Its identifiers, with the parts of each ([`presence_keys`]).
    pub(crate) idents: Rc<HashSet<String>>,
    /// Every string of the block, tool-call arguments also decoded (what spans are
    /// searched in).
    pub(crate) text: String,
}

/// Every string of `v` (as [`collect_strings`]), and the strings inside any string that
/// is a JSON object (tool-call arguments, as the model reads them).
fn span_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
            if s.starts_with('{')
                && let Ok(inner @ Value::Object(_)) = serde_json::from_str::<Value>(s)
            {
                collect_strings(&inner, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| span_text(i, out)),
        Value::Object(map) => map.values().for_each(|i| span_text(i, out)),
        _ => {}
    }
}

/// The blocks of rendered requests, measured once each (by the hash of their JSON).
#[derive(Default)]
pub(crate) struct Blocks {
    cache: HashMap<u64, Rc<BlockInfo>>,
}

impl Blocks {
    /// The key and measure of each block of `request`.
    pub(crate) fn measure(
        &mut self,
        request: &Value,
        framing: u64,
    ) -> (Vec<u64>, Vec<Rc<BlockInfo>>) {
        let mut keys = Vec::new();
        let mut infos = Vec::new();
        for block in blocks(request) {
            let mut hasher = DefaultHasher::new();
            block.to_string().hash(&mut hasher);
            let key = hasher.finish();
            let info = self
                .cache
                .entry(key)
                .or_insert_with(|| {
                    let mut strings = String::new();
                    collect_strings(block, &mut strings);
                    let mut text = String::new();
                    span_text(block, &mut text);
                    Rc::new(BlockInfo {
                        weight: u64::from(HeuristicCounter.count_text(&strings)) + framing,
                        idents: Rc::new(
                            identifiers(&strings)
                                .flat_map(presence_keys)
                                .map(str::to_owned)
                                .collect(),
                        ),
                        text,
                    })
                })
                .clone();
            keys.push(key);
            infos.push(info);
        }
        (keys, infos)
    }
}

/// The share of the blocks' weight that is a prefix unchanged from `previous`.
pub(crate) fn reuse_share(keys: &[u64], infos: &[Rc<BlockInfo>], previous: &[u64]) -> f64 {
    let total: u64 = infos.iter().map(|b| b.weight).sum();
    let reused: u64 = keys
        .iter()
        .zip(previous.iter())
        .take_while(|(a, b)| a == b)
        .zip(infos.iter())
        .map(|(_, b)| b.weight)
        .sum();
    if total == 0 {
        0.0
    } else {
        reused as f64 / total as f64
    }
}
