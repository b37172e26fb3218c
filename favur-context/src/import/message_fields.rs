//! The fields of a message as every importer reads them: the message list, each
//! message's object (refused if it carries an engine field), its role, its calls'
//! arguments, and the pairing of calls with results ([`Calls`]).

use serde_json::{Map, Value};

use super::{Format, ImportError, ParseOptions, bad, each};
use crate::model::message::{Arguments, ToolCall, check_call_ids};

/// The list of messages of a document: the array itself, or its `messages` array.
pub(crate) fn message_list(value: &Value, format: Format) -> Result<&[Value], ImportError> {
    let key = each::list_key(format);
    let expected = || {
        let what = each::document_name(format);
        ImportError::Shape(format!(
            "expected {what}: an array of messages or an object with `{key}`"
        ))
    };
    match value {
        Value::Array(a) => Ok(a),
        Value::Object(o) => match o.get(key) {
            Some(Value::Array(a)) => Ok(a),
            Some(_) => Err(ImportError::Shape(format!("`{key}` is not an array"))),
            None => Err(expected()),
        },
        _ => Err(expected()),
    }
}

/// The object of message `index`, or an error (see [`engine_fields`]).
pub(crate) fn object(index: usize, m: &Value) -> Result<&Map<String, Value>, ImportError> {
    let obj = m
        .as_object()
        .ok_or_else(|| bad(index, "a message must be a JSON object"))?;
    engine_fields(index, obj)?;
    Ok(obj)
}

/// Refuses a message `obj` (at `index`) holding a field named like the engine's own
/// extensions ([`ImportError::EngineField`]): every importer reads each message through
/// it, so none can turn a field of its input into an engine mark.
pub(crate) fn engine_fields(index: usize, obj: &Map<String, Value>) -> Result<(), ImportError> {
    match obj
        .keys()
        .find(|k| k.starts_with(crate::model::extensions::INTERNAL_EXTENSION_PREFIX))
    {
        Some(key) => Err(ImportError::EngineField {
            index,
            key: key.clone(),
        }),
        None => Ok(()),
    }
}

/// The value if it is a non-empty string (a call's id or name).
pub(crate) fn nonempty_str(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The `role` string of message `index`.
pub(crate) fn role_of(index: usize, obj: &Map<String, Value>) -> Result<&str, ImportError> {
    match obj.get("role") {
        Some(Value::String(r)) => Ok(r),
        Some(_) => Err(bad(index, "`role` is not a string")),
        None => Err(bad(index, "missing `role`")),
    }
}

/// Parses call arguments given as a JSON string.
pub(crate) fn arguments(
    index: usize,
    call_id: &str,
    raw: Option<&Value>,
    options: ParseOptions,
) -> Result<Arguments, ImportError> {
    let Some(Value::String(raw)) = raw else {
        return Err(ImportError::ArgumentsNotString {
            index,
            call_id: call_id.to_owned(),
        });
    };
    match serde_json::from_str::<Value>(raw) {
        Ok(v) => Ok(Arguments::Json(v)),
        Err(_) if options.keep_invalid_arguments => Ok(Arguments::Invalid(raw.clone())),
        Err(e) => Err(ImportError::InvalidArguments {
            index,
            call_id: call_id.to_owned(),
            error: e.to_string(),
        }),
    }
}

/// Tracks calls and results so each result answers a known, not yet answered call: the
/// most recent unanswered call with its id. O(1) per call and per result.
#[derive(Default)]
pub(crate) struct Calls {
    /// The unanswered calls of each id ever made, in order made (an id whose calls are
    /// all answered keeps an empty list: a result for it is a duplicate).
    open: std::collections::HashMap<String, Vec<ToolCall>>,
}

impl Calls {
    /// The calls of message `index`, made: refused unless their ids are non-empty and
    /// distinct.
    pub(crate) fn made_all<'a>(
        &mut self,
        index: usize,
        calls: impl IntoIterator<Item = &'a ToolCall> + Clone,
    ) -> Result<(), ImportError> {
        check_call_ids(calls.clone()).map_err(|problem| ImportError::CallId { index, problem })?;
        for call in calls {
            self.made(call);
        }
        Ok(())
    }

    fn made(&mut self, call: &ToolCall) {
        self.open
            .entry(call.id.clone())
            .or_default()
            .push(call.clone());
    }

    /// Marks the most recent unanswered call with `id` answered and returns it.
    pub(crate) fn answer(&mut self, index: usize, id: &str) -> Result<ToolCall, ImportError> {
        match self.open.get_mut(id) {
            Some(calls) => calls.pop().ok_or_else(|| ImportError::DuplicateResult {
                index,
                call_id: id.to_owned(),
            }),
            None => Err(ImportError::UnknownCall {
                index,
                call_id: id.to_owned(),
            }),
        }
    }
}
