//! The OpenAI Responses rules, checked on a request body's `input` items.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::{Rule, ValidationError, answer, call_err, err};

/// Validates an OpenAI Responses request body (`{"input": [...], ...}`, or the bare
/// `input` array), every call answered.
///
/// Rules:
/// - `input` is a non-empty array of objects, each with a known `type` (`message`, or no
///   `type` with a `role`; `function_call`, `function_call_output`, `reasoning`).
/// - A `message` has a role `user`, `system`, `developer` or `assistant` and content
///   that is a string or a non-empty array of parts legal for the role: `input_text`,
///   `input_image` (an `image_url` that is an http(s) or `data:image/` URL of a type in
///   [`OPENAI_IMAGE_MEDIA_TYPES`](super::OPENAI_IMAGE_MEDIA_TYPES), or a `file_id`) and `input_file` (`file_data` as a `data:` URL, `file_id` or
///   `file_url`) for user, system and developer; `output_text` and `refusal` for the
///   assistant, whose message with a content list is an output message (SDK
///   `ResponseOutputMessageParam`): it needs an `id`, a `status` and `annotations` on
///   each `output_text` part (an assistant message with string content is an easy input
///   message and needs none).
/// - A `function_call` has a non-empty `call_id` unique in the request, a `name` and
///   `arguments` as a string.
/// - Every `function_call_output` answers an earlier `function_call` (by `call_id`),
///   each call is answered exactly once, and no call is left unanswered.
/// - A `reasoning` item has an `id`, a `summary` array of `summary_text` parts, and,
///   when the request says `store: false`, a non-empty `encrypted_content`.
/// - In a request that holds reasoning, a `function_call` with an item `id` (one the
///   API produced, which it knows came with reasoning) is preceded, within its turn
///   (the items since the last user message or call output), by a `reasoning` item:
///   the rule behind "function_call was provided without its required 'reasoning'
///   item".
/// - Item ids (`id` of any item) are unique.
///
/// ```
/// use favur_context::render::validate::{validate_responses_strict, Rule};
/// let ok = serde_json::json!({"input": [
///     {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
///     {"type": "reasoning", "id": "rs_1", "summary": []},
///     {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "ls", "arguments": "{}"},
///     {"type": "function_call_output", "call_id": "c1", "output": "a.rs"},
/// ]});
/// validate_responses_strict(&ok).unwrap();
/// let mut bad = ok.clone();
/// bad["input"].as_array_mut().unwrap().insert(1, serde_json::json!(
///     {"type": "function_call", "id": "fc_0", "call_id": "c0", "name": "ls", "arguments": "{}"}));
/// let e = validate_responses_strict(&bad).unwrap_err();
/// assert_eq!((e.index, e.rule), (Some(1), Rule::MissingReasoning { call_id: "c0".into() }));
/// ```
pub fn validate_responses_strict(request: &Value) -> Result<(), ValidationError> {
    let (items, store) = input_items(request)?;
    let has_reasoning = items.iter().any(|i| kind(i) == Some("reasoning"));
    let mut calls: HashMap<&str, usize> = HashMap::new();
    let mut answered: HashSet<&str> = HashSet::new();
    let mut ids: HashSet<&str> = HashSet::new();
    // Whether the current turn has had a reasoning item.
    let mut reasoned = false;
    for (i, item) in items.iter().enumerate() {
        let at = Some(i);
        let fail = |rule: Rule| Err(err(at, rule));
        let Value::Object(obj) = item else {
            return fail(Rule::NotAnObject);
        };
        item_id(obj, &mut ids).map_err(|r| err(at, r))?;
        match kind(item) {
            Some("message") => {
                let Some(role) = obj.get("role").and_then(Value::as_str) else {
                    return fail(Rule::MissingRole);
                };
                message(role, obj.get("content")).map_err(|r| err(at, r))?;
                if role == "assistant" {
                    output_message(obj).map_err(|r| err(at, r))?;
                } else {
                    reasoned = false;
                }
            }
            Some("function_call") => {
                let call_id = function_call(at, obj)?;
                if calls.insert(call_id, i).is_some() {
                    return Err(call_err(at, call_id, |call_id| Rule::DuplicateCallId {
                        call_id,
                    }));
                }
                if has_reasoning && obj.contains_key("id") && !reasoned {
                    return Err(call_err(at, call_id, |call_id| Rule::MissingReasoning {
                        call_id,
                    }));
                }
            }
            Some("function_call_output") => {
                let Some(call_id) = obj.get("call_id").and_then(Value::as_str) else {
                    return fail(Rule::BadContent(
                        "a function_call_output needs a `call_id` string".into(),
                    ));
                };
                answer(at, call_id, calls.contains_key(call_id), &mut answered)?;
                call_output(obj.get("output")).map_err(|r| err(at, r))?;
                reasoned = false;
            }
            Some("reasoning") => {
                reasoning(obj, store == Some(false)).map_err(|r| err(at, r))?;
                reasoned = true;
            }
            Some(other) => return fail(Rule::BadContent(format!("unknown item type `{other}`"))),
            None => {
                return fail(Rule::BadContent(
                    "an item needs a `type` or a `role`".into(),
                ));
            }
        }
    }
    let mut open: Vec<(&str, usize)> = calls
        .into_iter()
        .filter(|(id, _)| !answered.contains(id))
        .collect();
    open.sort_by_key(|&(_, at)| at);
    if let Some(&(call_id, at)) = open.first() {
        return Err(call_err(Some(at), call_id, |call_id| Rule::MissingResult {
            call_id,
        }));
    }
    Ok(())
}

/// The request's `input` items (non-empty) and its `store` flag.
fn input_items(request: &Value) -> Result<(&Vec<Value>, Option<bool>), ValidationError> {
    let (items, store) = match request {
        Value::Array(a) => (a, None),
        Value::Object(o) => match o.get("input") {
            Some(Value::Array(a)) => (a, o.get("store").and_then(Value::as_bool)),
            _ => return Err(err(None, Rule::NotAList)),
        },
        _ => return Err(err(None, Rule::NotAList)),
    };
    if items.is_empty() {
        return Err(err(None, Rule::Empty));
    }
    Ok((items, store))
}

/// An item's `id`, if it has one: a non-empty string no other item has.
fn item_id<'a>(obj: &'a Map<String, Value>, ids: &mut HashSet<&'a str>) -> Result<(), Rule> {
    match obj.get("id").map(Value::as_str) {
        None => Ok(()),
        Some(Some(s)) if !s.is_empty() => {
            if ids.insert(s) {
                Ok(())
            } else {
                Err(Rule::DuplicateId { id: s.to_owned() })
            }
        }
        Some(_) => Err(Rule::BadContent(
            "an item `id` must be a non-empty string".into(),
        )),
    }
}

/// A `function_call`'s own fields (a non-empty `call_id`, a `name`, string
/// `arguments`); returns its call id.
fn function_call(at: Option<usize>, obj: &Map<String, Value>) -> Result<&str, ValidationError> {
    let text = |key: &str| obj.get(key).and_then(Value::as_str);
    let call_id = text("call_id").filter(|s| !s.is_empty()).ok_or_else(|| {
        err(
            at,
            Rule::BadToolCall("a function_call needs a non-empty `call_id`".into()),
        )
    })?;
    if text("name").is_none_or(str::is_empty) {
        return Err(err(
            at,
            Rule::BadToolCall(format!("call `{call_id}` needs a `name`")),
        ));
    }
    if text("arguments").is_none() {
        return Err(call_err(at, call_id, |call_id| Rule::ArgumentsNotString {
            call_id,
        }));
    }
    Ok(call_id)
}

/// A `function_call_output`'s `output`: a string or an array of input parts.
fn call_output(output: Option<&Value>) -> Result<(), Rule> {
    match output {
        Some(Value::String(_)) => Ok(()),
        Some(Value::Array(parts)) => parts.iter().try_for_each(|p| part("user", p)),
        _ => Err(Rule::BadContent(
            "`output` must be a string or an array of input parts".into(),
        )),
    }
}

/// An item's type (`message` for a typeless item with a role).
fn kind(item: &Value) -> Option<&str> {
    match item.get("type").and_then(Value::as_str) {
        Some(t) => Some(t),
        None if item.get("role").is_some() => Some("message"),
        None => None,
    }
}

fn message(role: &str, content: Option<&Value>) -> Result<(), Rule> {
    if !matches!(role, "user" | "system" | "developer" | "assistant") {
        return Err(Rule::UnknownRole(role.to_owned()));
    }
    match content {
        Some(Value::String(_)) => Ok(()),
        Some(Value::Array(parts)) if !parts.is_empty() => {
            parts.iter().try_for_each(|p| part(role, p))
        }
        Some(Value::Array(_)) => Err(Rule::BadContent("empty content array".into())),
        _ => Err(Rule::BadContent(
            "content must be a string or an array of parts".into(),
        )),
    }
}

/// An assistant message with a content list is an output message
/// (`ResponseOutputMessageParam` of the SDK; an easy input message's list holds input
/// parts, which an assistant message may not): it needs its `id`, a `status`, and
/// `annotations` on each `output_text` part. One with string content is an easy input
/// message and needs none of them.
fn output_message(obj: &serde_json::Map<String, Value>) -> Result<(), Rule> {
    let Some(Value::Array(parts)) = obj.get("content") else {
        return Ok(());
    };
    let missing = |what: &str| {
        Rule::BadContent(format!(
            "an assistant message with a content list is an output message and needs {what} \
             (or send its text as a string `content`)"
        ))
    };
    if !obj.get("id").is_some_and(Value::is_string) {
        return Err(missing("its `id`"));
    }
    let status = obj.get("status").and_then(Value::as_str);
    if !matches!(status, Some("in_progress" | "completed" | "incomplete")) {
        return Err(missing("a `status`"));
    }
    let annotated = |p: &Value| p["type"] != "output_text" || p["annotations"].is_array();
    if !parts.iter().all(annotated) {
        return Err(missing("`annotations` on each output_text part"));
    }
    Ok(())
}

/// A content part of a message of `role` (or of a call output, as `user`).
fn part(role: &str, p: &Value) -> Result<(), Rule> {
    let Some(kind) = p.get("type").and_then(Value::as_str) else {
        return Err(Rule::BadContent("a content part needs a `type`".into()));
    };
    let s = |key: &str| p.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
    let assistant = role == "assistant";
    match kind {
        "input_text" | "output_text" | "refusal" if (kind == "input_text") == assistant => {
            Err(Rule::BlockNotAllowed {
                block: kind.to_owned(),
                role: role.to_owned(),
            })
        }
        "input_text" | "output_text" => match p.get("text") {
            Some(Value::String(_)) => Ok(()),
            _ => Err(Rule::BadContent(format!(
                "an {kind} part needs a `text` string"
            ))),
        },
        "refusal" => match s("refusal") {
            Some(_) => Ok(()),
            None => Err(Rule::BadContent(
                "a refusal part needs a `refusal` string".into(),
            )),
        },
        "input_image" | "input_file" if assistant => Err(Rule::BlockNotAllowed {
            block: kind.to_owned(),
            role: role.to_owned(),
        }),
        "input_image" => match (s("image_url"), s("file_id")) {
            (Some(url), None)
                if url.starts_with("https://")
                    || url.starts_with("http://")
                    || (url.starts_with("data:image/") && url.contains(";base64,")) =>
            {
                super::media_types::openai_image_url(url)
            }
            (None, Some(_)) => Ok(()),
            _ => Err(Rule::BadSource(
                "an input_image needs an http(s) or data:image/ `image_url`, or a `file_id`".into(),
            )),
        },
        "input_file" => {
            let data = s("file_data").filter(|d| d.starts_with("data:") && d.contains(";base64,"));
            let given = [data, s("file_id"), s("file_url")].iter().flatten().count();
            if given == 1 {
                Ok(())
            } else {
                Err(Rule::BadSource(
                    "an input_file needs one of a data: `file_data`, a `file_id`, a `file_url`"
                        .into(),
                ))
            }
        }
        other => Err(Rule::BlockNotAllowed {
            block: other.to_owned(),
            role: role.to_owned(),
        }),
    }
}

fn reasoning(obj: &serde_json::Map<String, Value>, unstored: bool) -> Result<(), Rule> {
    if obj
        .get("id")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err(Rule::BadReasoning("a reasoning item needs an `id`".into()));
    }
    let Some(Value::Array(summary)) = obj.get("summary") else {
        return Err(Rule::BadReasoning(
            "a reasoning item needs a `summary` array".into(),
        ));
    };
    if !summary
        .iter()
        .all(|s| s["type"] == "summary_text" && s["text"].is_string())
    {
        return Err(Rule::BadReasoning(
            "summary parts must be `summary_text` with a `text` string".into(),
        ));
    }
    let encrypted = obj
        .get("encrypted_content")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty());
    if unstored && !encrypted {
        return Err(Rule::BadReasoning(
            "with `store: false` a reasoning item needs its `encrypted_content`".into(),
        ));
    }
    Ok(())
}
