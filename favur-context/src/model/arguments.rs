//! The arguments of a tool call, held as their JSON text.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The arguments of a tool call: JSON text, or the raw text when the model produced
/// invalid JSON (kept verbatim so nothing is lost and the error can be reported).
///
/// Valid JSON is held as its canonical compact serialization (what
/// `Value::to_string` gives for the parsed value), so equal values compare equal and
/// render byte-identically; the value is parsed on demand by [`to_value`](Self::to_value).
/// Holding the text, not a [`Value`], keeps a one-key object at its length instead of a
/// map node of several hundred bytes.
///
/// ```
/// use favur_context::Arguments;
/// assert_eq!(Arguments::parse(r#"{ "path": "src" }"#), Arguments::json(serde_json::json!({"path": "src"})));
/// assert_eq!(Arguments::parse(r#"{ "path": "src" }"#).as_str(), r#"{"path":"src"}"#);
/// assert_eq!(Arguments::parse("{oops"), Arguments::invalid("{oops"));
/// ```
///
/// It serializes as `{"json": <value>}` or `{"invalid": "<raw>"}`:
///
/// ```
/// use favur_context::Arguments;
/// let args = Arguments::parse(r#"{"a":[1,2]}"#);
/// assert_eq!(serde_json::to_string(&args).unwrap(), r#"{"json":{"a":[1,2]}}"#);
/// assert_eq!(serde_json::to_string(&Arguments::invalid("{a")).unwrap(), r#"{"invalid":"{a"}"#);
/// let back: Arguments = serde_json::from_str(r#"{"json": {"a": [1, 2]}}"#).unwrap();
/// assert_eq!(back, args);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Arguments {
    text: Box<str>,
    valid: bool,
}

impl Arguments {
    /// Parses `raw` as JSON, holding its canonical text if it is valid and `raw` verbatim
    /// (see [`invalid`](Self::invalid)) if it is not.
    ///
    /// ```
    /// use favur_context::Arguments;
    /// assert!(Arguments::parse("[1, 2]").is_valid());
    /// assert_eq!(Arguments::parse("[1, 2]").as_str(), "[1,2]");
    /// assert!(!Arguments::parse("[1, 2").is_valid());
    /// ```
    pub fn parse(raw: impl Into<String>) -> Self {
        let raw = raw.into();
        match serde_json::from_str::<Value>(&raw) {
            Ok(value) => Arguments::json(value),
            Err(_) => Arguments::invalid(raw),
        }
    }

    /// Well-formed JSON arguments, held as the value's canonical compact text.
    ///
    /// ```
    /// use favur_context::Arguments;
    /// let args = Arguments::json(serde_json::json!({"command": "ls"}));
    /// assert_eq!(args.as_str(), r#"{"command":"ls"}"#);
    /// assert!(args.is_valid());
    /// ```
    pub fn json(value: Value) -> Self {
        Arguments {
            text: value.to_string().into_boxed_str(),
            valid: true,
        }
    }

    /// The raw text the model produced, kept verbatim as invalid arguments (whether or
    /// not it parses: use [`parse`](Self::parse) to decide).
    ///
    /// ```
    /// use favur_context::Arguments;
    /// let args = Arguments::invalid("{\"command\": \"ls");
    /// assert!(!args.is_valid());
    /// assert_eq!(args.as_str(), "{\"command\": \"ls");
    /// assert_eq!(args.to_value(), None);
    /// ```
    pub fn invalid(raw: impl Into<String>) -> Self {
        Arguments {
            text: raw.into().into_boxed_str(),
            valid: false,
        }
    }

    /// Whether the arguments are well-formed JSON.
    ///
    /// ```
    /// assert!(favur_context::Arguments::parse("{}").is_valid());
    /// assert!(!favur_context::Arguments::parse("{").is_valid());
    /// ```
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// The text: the canonical compact JSON, or the raw invalid text.
    ///
    /// ```
    /// use favur_context::Arguments;
    /// assert_eq!(Arguments::parse(r#"{"b": 1, "a": 2}"#).as_str(), r#"{"a":2,"b":1}"#);
    /// assert_eq!(Arguments::parse("{a").as_str(), "{a");
    /// ```
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The parsed value (parsed on each call), if the arguments are valid JSON.
    ///
    /// ```
    /// use favur_context::Arguments;
    /// assert_eq!(Arguments::parse("3").to_value(), Some(serde_json::json!(3)));
    /// assert_eq!(Arguments::parse(r#"{"command":"ls"}"#).to_value().unwrap()["command"], "ls");
    /// assert_eq!(Arguments::parse("{a").to_value(), None);
    /// ```
    pub fn to_value(&self) -> Option<Value> {
        if self.valid {
            serde_json::from_str(&self.text).ok()
        } else {
            None
        }
    }

    /// The arguments as an owned JSON string: the canonical text, or the raw invalid text.
    ///
    /// ```
    /// use favur_context::Arguments;
    /// assert_eq!(Arguments::parse(r#"{"a":1}"#).to_json_string(), r#"{"a":1}"#);
    /// assert_eq!(Arguments::parse("{a").to_json_string(), "{a");
    /// ```
    pub fn to_json_string(&self) -> String {
        self.text.to_string()
    }
}

impl From<Value> for Arguments {
    fn from(value: Value) -> Self {
        Arguments::json(value)
    }
}

impl From<&str> for Arguments {
    fn from(raw: &str) -> Self {
        Arguments::parse(raw)
    }
}

impl From<String> for Arguments {
    fn from(raw: String) -> Self {
        Arguments::parse(raw)
    }
}

/// The serde form of the release that held a [`Value`]: `{"json": ...}` / `{"invalid": ...}`.
#[derive(Serialize)]
#[serde(rename = "Arguments", rename_all = "snake_case")]
enum Written<'a> {
    Json(Value),
    Invalid(&'a str),
}

#[derive(Deserialize)]
#[serde(rename = "Arguments", rename_all = "snake_case")]
enum Read {
    Json(Value),
    Invalid(String),
}

impl Serialize for Arguments {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // The value is parsed back from its canonical text, so every format (not only
        // JSON) sees the same value as before.
        match self.to_value() {
            Some(value) => Written::Json(value),
            None => Written::Invalid(&self.text),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Arguments {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Read::deserialize(deserializer)? {
            Read::Json(value) => Arguments::json(value),
            Read::Invalid(raw) => Arguments::invalid(raw),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_text_and_round_trip() {
        let a = Arguments::parse("{ \"z\": 1, \"a\": [true, null, 1.5, \"x\\u00e9\"] }");
        assert_eq!(
            a,
            Arguments::json(json!({"a": [true, null, 1.5, "xé"], "z": 1}))
        );
        let s = serde_json::to_string(&a).unwrap();
        assert_eq!(s, r#"{"json":{"a":[true,null,1.5,"xé"],"z":1}}"#);
        assert_eq!(serde_json::from_str::<Arguments>(&s).unwrap(), a);
        let bad = Arguments::invalid("{\"command\": \"cargo te");
        let s = serde_json::to_string(&bad).unwrap();
        assert_eq!(serde_json::from_str::<Arguments>(&s).unwrap(), bad);
        assert!(std::mem::size_of::<Arguments>() <= 24);
        assert!(std::mem::size_of::<crate::ToolCall>() <= 88);
    }
}
