//! JSON objects built for a request without `json!` (which copies every value it is
//! given), and the buffers a renderer keeps to build in again.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// A JSON object of `fields`, each value moved in: what `json!` builds, without
/// serializing its values again (`json!` copies every text and value it is given).
pub(in crate::request::render) fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    // Inserted one by one: collecting sorts a buffer first.
    let mut map = Map::new();
    for (key, value) in fields {
        map.insert(key.to_owned(), value);
    }
    Value::Object(map)
}

/// A JSON object with `template`'s keys, each value of `fields` put in place of its
/// key's: the same object [`object`] builds, made by cloning a map built once (no key
/// search, no insertion, one node). Every key of `fields` must be one of `template`'s.
pub(in crate::request::render) fn filled<const N: usize>(
    template: &Map<String, Value>,
    fields: [(&str, Value); N],
) -> Value {
    Value::Object(filled_map(template, fields))
}

/// The map of [`filled`].
pub(in crate::request::render) fn filled_map<const N: usize>(
    template: &Map<String, Value>,
    fields: [(&str, Value); N],
) -> Map<String, Value> {
    let mut map = template.clone();
    for (key, value) in fields {
        match map.get_mut(key) {
            Some(slot) => *slot = value,
            None => {
                map.insert(key.to_owned(), value);
            }
        }
    }
    map
}

/// How many of each kind of value a renderer keeps to build in again (see
/// `openai::Spare` and `anthropic::Spare`).
pub(in crate::request::render) const SPARE: usize = 128;
/// The largest text buffer a renderer keeps to build in again (bytes of capacity): a
/// long text is freed.
pub(in crate::request::render) const SPARE_TEXT: usize = 16 * 1024;

/// `buffer`, a kept one, made to hold `text`: a borrowed text is copied into its room,
/// an owned one moved in.
pub(in crate::request::render) fn refill(buffer: &mut String, text: Cow<'_, str>) {
    match text {
        Cow::Borrowed(t) => {
            buffer.clear();
            buffer.push_str(t);
        }
        Cow::Owned(t) => *buffer = t,
    }
}

/// The empty map the messages the renderer makes (notes, repaired results) carry as
/// their extensions.
pub(in crate::request::render) fn empty_map() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}
