//! Gemini `generateContent` bodies: `systemInstruction` and `contents`.
//!
//! The rules, from Google's Gemini API documentation (see `docs/formats.md`
//! for each rule, its source and the test that checks it):
//!
//! - a `Content` has a `role` of `user` or `model` and a non-empty list of `parts`; each
//!   part holds one kind of data (`text`, `inlineData`, `fileData`, `functionCall`,
//!   `functionResponse`, `executableCode`, `codeExecutionResult`); a text is not empty
//!   (unless it carries a `thoughtSignature`: Gemini returns a last signature so);
//! - the conversation starts with a user turn and turns alternate (the renderer merges
//!   consecutive turns of one role);
//! - function calling: "the number of function response parts should be equal to the
//!   number of function call parts": every model turn with N `functionCall` parts is
//!   followed by a user turn with exactly N `functionResponse` parts, in the order of the
//!   calls, with matching names (and ids when both have one); no `functionResponse`
//!   without its call; a `functionCall` only in a model turn, a `functionResponse` only
//!   in a user turn; a call has a `name` and object `args`, a response a `name` and an
//!   object `response`;
//! - an `inlineData` or `fileData` image has a `mimeType` in
//!   [`GEMINI_IMAGE_MEDIA_TYPES`](super::GEMINI_IMAGE_MEDIA_TYPES);
//! - `systemInstruction` holds text parts only;
//! - a `thoughtSignature` is a non-empty string, on a part of a model turn (it is
//!   returned on the model's own parts and replayed verbatim on them), never on a
//!   `functionResponse` nor in a user turn.

use serde_json::{Map, Value};

use super::{GEMINI_IMAGE_MEDIA_TYPES, Rule, Turns, ValidationError, call_err, err, not_allowed};

/// The data fields of a Gemini `Part`: exactly one per part.
const DATA: [&str; 7] = [
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
];

/// Validates a Gemini `generateContent` body (`{"systemInstruction": ..., "contents":
/// [...]}`), accepting an in-flight tail: a last model turn whose calls have no
/// responses yet (the caller is about to run them), followed or not by a last user turn
/// answering some of them, in their order. See [`validate_gemini_strict`].
///
/// ```
/// use favur_context::render::validate::{validate_gemini, validate_gemini_strict, Rule};
/// let body = serde_json::json!({"contents": [
///     {"role": "user", "parts": [{"text": "list the files"}]},
///     {"role": "model", "parts": [{"functionCall": {"name": "bash", "args": {"command": "ls"}}}]},
/// ]});
/// assert!(validate_gemini(&body).is_ok());
/// let err = validate_gemini_strict(&body).unwrap_err();
/// assert_eq!(err.rule, Rule::MissingResult { call_id: "bash".into() });
/// ```
pub fn validate_gemini(request: &Value) -> Result<(), ValidationError> {
    gemini(request, false)
}

/// Validates a Gemini `generateContent` body strictly: every rule of the module, and
/// every call answered.
///
/// Rules: `contents` is a non-empty array; each content is an object with `role`
/// `user` or `model` and a non-empty `parts` array; the first content is a user turn and
/// roles alternate; each part is an object with exactly one data field; texts are
/// non-empty strings (an empty one only with a `thoughtSignature`); `functionCall` (model turns only) has a non-empty `name` and an
/// object `args`; `functionResponse` (user turns only) has a non-empty `name` and an
/// object `response`; a model turn with N calls is followed by a user turn with exactly
/// N responses answering them in order (same name; same id when both have one), and a
/// response only follows such a turn; `systemInstruction`, if present, is an object
/// whose `parts` are all text parts; a `thoughtSignature` is a non-empty string on a
/// part of a model turn other than a `functionResponse`.
///
/// ```
/// use favur_context::render::validate::{validate_gemini_strict, Rule};
/// let body = serde_json::json!({"contents": [
///     {"role": "user", "parts": [{"text": "run both"}]},
///     {"role": "model", "parts": [
///         {"functionCall": {"name": "ls", "args": {}}, "thoughtSignature": "c2ln"},
///         {"functionCall": {"name": "pwd", "args": {}}}]},
///     {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "a.rs"}}}]},
/// ]});
/// let err = validate_gemini_strict(&body).unwrap_err();
/// assert_eq!((err.index, err.rule), (Some(2), Rule::ResponseCount { calls: 2, responses: 1 }));
/// ```
pub fn validate_gemini_strict(request: &Value) -> Result<(), ValidationError> {
    gemini(request, true)
}

fn system_instruction(system: Option<&Value>) -> Result<(), ValidationError> {
    let bad = |why: &str| err(None, Rule::BadSystem(why.to_owned()));
    let Some(system) = system else {
        return Ok(());
    };
    let Some(Value::Array(parts)) = system.get("parts") else {
        return Err(bad(
            "`systemInstruction` must be a content with a `parts` array",
        ));
    };
    if parts.is_empty() {
        return Err(bad("`systemInstruction.parts` is empty"));
    }
    for p in parts {
        let Some(obj) = p.as_object() else {
            return Err(bad("a part must be an object"));
        };
        match obj.get("text") {
            Some(Value::String(t)) if !t.is_empty() => {}
            Some(Value::String(_)) => return Err(bad("a text part must not be empty")),
            _ => return Err(bad("`systemInstruction` holds text parts only")),
        }
        if obj
            .keys()
            .any(|k| DATA.contains(&k.as_str()) && k != "text")
        {
            return Err(bad("`systemInstruction` holds text parts only"));
        }
    }
    Ok(())
}

/// A call of a model turn: its name and id.
struct Call<'a> {
    name: &'a str,
    id: Option<&'a str>,
}

fn name_id<'a>(
    obj: &'a Map<String, Value>,
    what: &str,
    at: Option<usize>,
) -> Result<Call<'a>, ValidationError> {
    let name = match obj.get("name") {
        Some(Value::String(n)) if !n.is_empty() => n.as_str(),
        _ => {
            return Err(err(
                at,
                Rule::BadToolCall(format!("a `{what}` needs a non-empty `name`")),
            ));
        }
    };
    let id = match obj.get("id") {
        None => None,
        Some(Value::String(id)) => Some(id.as_str()),
        Some(_) => {
            return Err(err(
                at,
                Rule::BadToolCall(format!("`{what}.id` must be a string")),
            ));
        }
    };
    Ok(Call { name, id })
}

/// Checks one part; its call or response, if it is one.
fn part<'a>(
    p: &'a Value,
    role: &str,
    at: Option<usize>,
) -> Result<(Option<Call<'a>>, Option<Call<'a>>), ValidationError> {
    let bad = |why: String| err(at, Rule::BadContent(why));
    let Some(obj) = p.as_object() else {
        return Err(bad("a part must be an object".into()));
    };
    let kinds: Vec<&str> = DATA
        .iter()
        .copied()
        .filter(|k| obj.contains_key(*k))
        .collect();
    let [kind] = kinds[..] else {
        return Err(bad(format!(
            "a part holds exactly one of {}; this one holds {}",
            DATA.join(", "),
            kinds.len()
        )));
    };
    thought_signature(obj, role, kind, at)?;
    match kind {
        "text" => match obj.get("text") {
            // Gemini returns a last signature on an empty text part; it is replayed so.
            Some(Value::String(t)) if !t.is_empty() || obj.contains_key("thoughtSignature") => {
                Ok((None, None))
            }
            Some(Value::String(_)) => Err(err(at, Rule::EmptyText)),
            _ => Err(bad("`text` must be a string".into())),
        },
        "functionCall" => {
            if role != "model" {
                return Err(not_allowed(at, kind, role));
            }
            Ok((Some(function_call(obj.get(kind), at)?), None))
        }
        "functionResponse" => {
            if role != "user" {
                return Err(not_allowed(at, kind, role));
            }
            Ok((None, Some(function_response(obj.get(kind), at)?)))
        }
        "inlineData" | "fileData" => {
            data(obj.get(kind), kind, at)?;
            Ok((None, None))
        }
        _ => Ok((None, None)),
    }
}

/// A part's `thoughtSignature`, if any: a non-empty string, on the model's own parts,
/// not on a function response.
fn thought_signature(
    obj: &Map<String, Value>,
    role: &str,
    kind: &str,
    at: Option<usize>,
) -> Result<(), ValidationError> {
    let Some(sig) = obj.get("thoughtSignature") else {
        return Ok(());
    };
    let why = match sig {
        Value::String(s) if s.is_empty() => Some("it must not be empty".to_owned()),
        Value::String(_) if role != "model" => {
            Some("it is only replayed on the model's own parts".to_owned())
        }
        Value::String(_) if kind == "functionResponse" => {
            Some("a functionResponse cannot carry one".to_owned())
        }
        Value::String(_) => None,
        _ => Some("it must be a string".to_owned()),
    };
    match why {
        Some(why) => Err(err(at, Rule::BadThoughtSignature(why))),
        None => Ok(()),
    }
}

/// A `functionCall`: an object with a name (and maybe an id), `args` an object.
fn function_call(value: Option<&Value>, at: Option<usize>) -> Result<Call<'_>, ValidationError> {
    let Some(Value::Object(call)) = value else {
        return Err(err(
            at,
            Rule::BadToolCall("`functionCall` must be an object".into()),
        ));
    };
    let c = name_id(call, "functionCall", at)?;
    if call.get("args").is_some_and(|a| !a.is_object()) {
        return Err(err(
            at,
            Rule::BadToolCall(format!("call `{}`: `args` must be an object", c.name)),
        ));
    }
    Ok(c)
}

/// A `functionResponse`: an object with a name (and maybe an id), `response` an object.
fn function_response(
    value: Option<&Value>,
    at: Option<usize>,
) -> Result<Call<'_>, ValidationError> {
    let bad = |why: String| err(at, Rule::BadContent(why));
    let Some(Value::Object(r)) = value else {
        return Err(bad("`functionResponse` must be an object".into()));
    };
    let c = name_id(r, "functionResponse", at)?;
    if !r.get("response").is_some_and(Value::is_object) {
        return Err(bad(format!(
            "the response for `{}` needs an object `response`",
            c.name
        )));
    }
    Ok(c)
}

/// `inlineData` (`mimeType` and `data`) or `fileData` (`mimeType` and `fileUri`); an
/// image of a type Gemini takes.
fn data(value: Option<&Value>, kind: &str, at: Option<usize>) -> Result<(), ValidationError> {
    let bad = |why: String| err(at, Rule::BadContent(why));
    let Some(Value::Object(d)) = value else {
        return Err(bad(format!("`{kind}` must be an object")));
    };
    let needs = if kind == "inlineData" {
        ["mimeType", "data"]
    } else {
        ["mimeType", "fileUri"]
    };
    if needs
        .iter()
        .any(|k| !d.get(*k).is_some_and(Value::is_string))
    {
        return Err(bad(format!(
            "`{kind}` needs `{}` and `{}` strings",
            needs[0], needs[1]
        )));
    }
    let mime = d
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if mime.starts_with("image/") && !GEMINI_IMAGE_MEDIA_TYPES.contains(&mime) {
        let media_type = mime.to_owned();
        return Err(err(at, Rule::BadMediaType { media_type }));
    }
    Ok(())
}

fn label(c: &Call<'_>) -> String {
    c.id.unwrap_or(c.name).to_owned()
}

fn gemini(request: &Value, strict: bool) -> Result<(), ValidationError> {
    system_instruction(request.get("systemInstruction"))?;
    let list = match request.get("contents") {
        Some(Value::Array(a)) => a,
        _ => {
            return Err(err(
                None,
                Rule::BadContent("the body needs a `contents` array".into()),
            ));
        }
    };
    if list.is_empty() {
        return Err(err(None, Rule::Empty));
    }
    // The calls of the model turn before, waiting for their responses.
    let mut open: Vec<Call<'_>> = Vec::new();
    let mut turns = Turns::new("model");
    for (i, content) in list.iter().enumerate() {
        let at = Some(i);
        let (obj, role) = turns.next(i, content)?;
        let parts = match obj.get("parts") {
            Some(Value::Array(p)) if !p.is_empty() => p,
            Some(Value::Array(_)) => {
                return Err(err(
                    at,
                    Rule::BadContent("`parts` must not be empty".into()),
                ));
            }
            _ => return Err(err(at, Rule::BadContent("a content needs `parts`".into()))),
        };
        let waiting = std::mem::take(&mut open);
        let mut responses = Vec::new();
        for p in parts {
            let (call, response) = part(p, role, at)?;
            open.extend(call);
            responses.extend(response);
        }
        if let Some(first) = responses.first()
            && waiting.is_empty()
        {
            return Err(call_err(at, label(first), |call_id| {
                Rule::ResultWithoutCall { call_id }
            }));
        }
        if !waiting.is_empty() {
            let in_flight = !strict && i + 1 == list.len() && responses.len() < waiting.len();
            answers(&waiting, &responses, in_flight, at)?;
        }
    }
    // `open` holds the calls of the last turn.
    if strict && let Some(call) = open.first() {
        return Err(call_err(Some(list.len() - 1), label(call), |call_id| {
            Rule::MissingResult { call_id }
        }));
    }
    Ok(())
}

/// The responses of a user turn answer the calls `waiting` from the model turn before:
/// one each, in order; with calls still `in_flight` (the last turn), some of them, still
/// in their order.
fn answers(
    waiting: &[Call<'_>],
    responses: &[Call<'_>],
    in_flight: bool,
    at: Option<usize>,
) -> Result<(), ValidationError> {
    if responses.len() != waiting.len() && !in_flight {
        return Err(err(
            at,
            Rule::ResponseCount {
                calls: waiting.len(),
                responses: responses.len(),
            },
        ));
    }
    let mut calls = waiting.iter();
    for (k, response) in responses.iter().enumerate() {
        let answers = |call: &&Call<'_>| {
            call.name == response.name
                && !matches!((call.id, response.id), (Some(a), Some(b)) if a != b)
        };
        let found = if in_flight {
            calls.find(answers)
        } else {
            calls.next().filter(answers)
        };
        if found.is_none() {
            let expected = waiting.get(k).map_or_else(String::new, label);
            return Err(err(
                at,
                Rule::ResponseMismatch {
                    position: k,
                    expected,
                    found: label(response),
                },
            ));
        }
    }
    Ok(())
}
