//! Streaming import: a document's messages are read, checked and classified one at a
//! time, so the document is never held as a [`Value`] nor as a [`Transcript`] beside
//! the classified messages. (OpenAI Responses transcripts, whose items may stand in two
//! lists, are read whole.)
//!
//! Three passes over the text, none holding more than one message: the strict walk
//! (repeated keys, syntax), for Anthropic the `system` parameter (it may follow the
//! messages), then the messages themselves, each read as a [`Value`], handed to the
//! format's reader and classified. Errors are those of [`parse_with`](super::parse_with)
//! followed by [`Transcript::classify`](super::Transcript::classify), in the same order.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::classifying::Classifying;
use super::{Classifier, Format, ImportError, ImportedMessage, ParseOptions, each};
use crate::json_keys;

/// The classified messages of a transcript read by [`classify_str`], and its exit record.
///
/// ```
/// use favur_context::Retention;
/// use favur_context::import::{classify_str, Format, IncomingMessage, ParseOptions};
/// let imported = classify_str(Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#,
///     ParseOptions::default(), &|_: &IncomingMessage<'_>| Retention::Fuzzy).unwrap();
/// assert_eq!(imported.messages[0].classified.retention(), Retention::Fuzzy);
/// assert_eq!(imported.exit, None);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The messages, classified, in order (ready to append or pin).
    pub messages: Vec<ImportedMessage>,
    /// The mini-swe-agent exit record, if any.
    pub exit: Option<String>,
}

/// Reads a transcript of `format` from JSON text and classifies every message, reading
/// one message at a time: what [`parse_with`](super::parse_with) then
/// [`Transcript::classify`](super::Transcript::classify) give, the same messages and
/// the same errors, without holding the document as a value or the parsed transcript
/// (memory: the classified messages and one message being read).
///
/// # Errors
///
/// As [`parse_with`](super::parse_with) (repeated keys, invalid JSON, shape, a
/// malformed message, with its index), then [`ImportError::Unclassified`] listing every
/// message the classifier declined.
///
/// ```
/// use favur_context::Retention;
/// use favur_context::import::{classify_str, Format, ImportError, IncomingMessage, ParseOptions};
/// let strict = |_: &IncomingMessage<'_>| Retention::Strict;
/// let json = r#"{"messages": [{"role": "user", "content": "task"}, {"role": "tool", "content": "x"}]}"#;
/// let err = classify_str(Format::MiniSweAgent, json, ParseOptions::default(), &strict).unwrap_err();
/// assert_eq!(err, ImportError::Message { index: 1, problem: "missing `tool_call_id`".into() });
/// ```
pub fn classify_str<C: Classifier + ?Sized>(
    format: Format,
    json: &str,
    options: ParseOptions,
    classifier: &C,
) -> Result<Imported, ImportError> {
    if format == Format::Responses {
        // Responses items may stand in two lists (`input`, `output`) and pair across
        // them: read whole, then classified.
        let transcript = super::parse_with(format, json, options)?;
        return Ok(Imported {
            messages: transcript.classify(classifier)?,
            exit: None,
        });
    }
    json_keys::check_strict(json.as_bytes()).map_err(|e| match e {
        json_keys::Strict::Duplicate(d) => ImportError::DuplicateKey {
            key: d.key,
            line: d.line,
            column: d.column,
        },
        json_keys::Strict::Syntax(e) => ImportError::Json(e),
    })?;
    let system = match each::system_key(format) {
        Some(key) => system_param(json, key)?,
        None => None,
    };
    let mut classifying = Classifying::new(format, classifier, 0);
    let mut sink = |m| {
        classifying.take(Cow::Owned(m));
        Ok(())
    };
    let mut feed = |list: &mut dyn Iterator<Item = Result<Value, ImportError>>| {
        each::read_each(format, system.as_ref(), list, options, &mut sink)
    };
    let exit = read_messages(json, format, &mut feed)?;
    Ok(Imported {
        messages: classifying.finish()?,
        exit,
    })
}

/// What a document's reader is fed: its messages, one by one.
type Feed<'a> = dyn FnMut(
        &mut dyn Iterator<Item = Result<Value, ImportError>>,
    ) -> Result<Option<String>, ImportError>
    + 'a;

/// Where the reading of a document stands.
struct State<'a, 'f> {
    feed: &'a mut Feed<'f>,
    format: Format,
    /// The error that stopped the reading (serde only carries text).
    failed: Option<ImportError>,
    exit: Option<String>,
    /// Whether the document is an array or an object (its shape may hold messages).
    entered: bool,
    /// Whether a list of messages was found and read.
    found: bool,
    /// Whether the value of `messages` is being read, and whether it is an array.
    in_messages: bool,
    messages_array: bool,
}

/// Reads the messages of `json` (an array, or an object with `messages`), feeding them
/// to `feed`; returns the exit record it gives.
fn read_messages(
    json: &str,
    format: Format,
    feed: &mut Feed<'_>,
) -> Result<Option<String>, ImportError> {
    let mut state = State {
        feed,
        format,
        failed: None,
        exit: None,
        entered: false,
        found: false,
        in_messages: false,
        messages_array: false,
    };
    let mut de = serde_json::Deserializer::from_str(json);
    let read = de
        .deserialize_any(Document(&mut state))
        .and_then(|()| de.end());
    if let Some(e) = state.failed.take() {
        return Err(e);
    }
    let expected = || {
        ImportError::Shape(format!(
            "expected {}: an array of messages or an object with `{}`",
            each::document_name(format),
            each::list_key(format)
        ))
    };
    match read {
        Ok(()) if state.found => Ok(state.exit),
        Ok(()) => Err(expected()),
        Err(_) if state.in_messages && !state.messages_array => Err(ImportError::Shape(format!(
            "`{}` is not an array",
            each::list_key(format)
        ))),
        Err(_) if !state.entered => Err(expected()),
        Err(e) => Err(ImportError::Json(e.to_string())),
    }
}

/// Feeds the elements of `seq` to the reader.
fn feed_seq<'de, A: SeqAccess<'de>>(state: &mut State<'_, '_>, mut seq: A) -> Result<(), A::Error> {
    state.found = true;
    let mut items = std::iter::from_fn(|| match seq.next_element::<Value>() {
        Ok(Some(v)) => Some(Ok(v)),
        Ok(None) => None,
        Err(e) => Some(Err(ImportError::Json(e.to_string()))),
    });
    match (state.feed)(&mut items) {
        Ok(exit) => {
            state.exit = exit;
            Ok(())
        }
        Err(e) => {
            state.failed = Some(e);
            Err(de::Error::custom("import stopped"))
        }
    }
}

/// The whole document.
struct Document<'s, 'a, 'f>(&'s mut State<'a, 'f>);

impl<'de> Visitor<'de> for Document<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of messages or an object with `messages`")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        self.0.entered = true;
        feed_seq(self.0, seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0.entered = true;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == each::list_key(self.0.format) {
                self.0.in_messages = true;
                map.next_value_seed(Messages(&mut *self.0))?;
                self.0.in_messages = false;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// The value of a document's `messages`.
struct Messages<'s, 'a, 'f>(&'s mut State<'a, 'f>);

impl<'de> DeserializeSeed<'de> for Messages<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Messages<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of messages")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        self.0.messages_array = true;
        feed_seq(self.0, seq)
    }
}

/// The `system` parameter of an Anthropic request, if the document is an object that
/// has one: read first, as the parser reads it before the messages.
fn system_param(json: &str, key: &'static str) -> Result<Option<Value>, ImportError> {
    struct System(&'static str);
    impl<'de> Visitor<'de> for System {
        type Value = Option<Value>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON document")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Value>, A::Error> {
            let mut system = None;
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                if key == self.0 {
                    system = Some(map.next_value::<Value>()?);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(system)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Value>, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    }
    let mut de = serde_json::Deserializer::from_str(json);
    // Any other document has no `system` (the messages pass reports its shape).
    Ok(de.deserialize_any(System(key)).unwrap_or(None))
}
