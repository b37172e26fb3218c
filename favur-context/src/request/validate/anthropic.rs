//! Anthropic Messages requests: the turns, the system value, and every `tool_use` answered
//! by the `tool_result` blocks of the next user turn.

use std::collections::HashSet;

use serde_json::Value;

use super::{
    Rule, Turns, ValidationError, answer, anthropic_blocks, cache_control, call_err, err, messages,
    not_allowed,
};

/// Validates an Anthropic Messages request (`{"system": ..., "messages": [...]}` or the
/// bare `messages` array), accepting an in-flight tail of unanswered `tool_use` blocks in
/// the last assistant message (followed, or not, by a last user message holding only the
/// results of some of them).
///
/// ```
/// use favur_context::render::validate::{validate_anthropic, validate_anthropic_strict};
/// let partly = serde_json::json!([
///     {"role": "user", "content": "run both"},
///     {"role": "assistant", "content": [
///         {"type": "tool_use", "id": "t1", "name": "bash", "input": {}},
///         {"type": "tool_use", "id": "t2", "name": "bash", "input": {}}]},
///     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "ok"}]},
/// ]);
/// assert!(validate_anthropic(&partly).is_ok());
/// assert!(validate_anthropic_strict(&partly).is_err());
/// ```
///
/// Rules: `system` is absent, a string, or an array of non-empty text blocks; roles are
/// `user` or `assistant`, the first is `user` and they alternate; content is a non-empty
/// string or a non-empty array of blocks; text blocks hold non-whitespace text;
/// `tool_use` (assistant only) has an id of `[a-zA-Z0-9_-]+` unique in the request, a
/// name and an object `input`; the user turn after an assistant turn with `tool_use`
/// blocks starts with exactly one `tool_result` (user only) per call before any other
/// block, and every `tool_result` answers a call of the assistant turn before it.
///
/// This is stricter than the API in one place: the API merges consecutive same-role
/// turns, the validator requires them merged.
///
/// ```
/// let req = serde_json::json!({"system": "Be brief.", "messages": [
///     {"role": "user", "content": "list files"},
///     {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}]},
///     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.rs"}]},
/// ]});
/// favur_context::render::validate::validate_anthropic(&req).unwrap();
/// ```
pub fn validate_anthropic(request: &Value) -> Result<(), ValidationError> {
    anthropic(request, false)
}

/// [`validate_anthropic`], but `tool_use` blocks without a result at the end are an error
/// too, and prompt-cache breakpoints are checked: at most [`MAX_CACHE_BREAKPOINTS`](crate::render::validate::MAX_CACHE_BREAKPOINTS)
/// `cache_control` markers in `tools`, `system` and `messages`, each `{"type":
/// "ephemeral"}` (an optional `ttl` of `"5m"` or `"1h"`), on a block that can carry one.
///
/// ```
/// let req = serde_json::json!({"messages": [
///     {"role": "user", "content": "go"},
///     {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]},
/// ]});
/// assert!(favur_context::render::validate::validate_anthropic(&req).is_ok());
/// assert!(favur_context::render::validate::validate_anthropic_strict(&req).is_err());
/// ```
pub fn validate_anthropic_strict(request: &Value) -> Result<(), ValidationError> {
    anthropic(request, true)?;
    cache_control::check(request)
}

fn valid_tool_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn anthropic_system(system: Option<&Value>) -> Result<(), ValidationError> {
    let bad = |why: &str| err(None, Rule::BadSystem(why.to_owned()));
    match system {
        None | Some(Value::String(_)) => Ok(()),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                if b.get("type").and_then(Value::as_str) != Some("text") {
                    return Err(bad("system blocks must be text blocks"));
                }
                match b.get("text").and_then(Value::as_str) {
                    Some(t) if !t.trim().is_empty() => {}
                    _ => return Err(bad("system text blocks must contain non-whitespace text")),
                }
            }
            Ok(())
        }
        Some(_) => Err(bad("must be a string or an array of text blocks")),
    }
}

fn anthropic(request: &Value, strict: bool) -> Result<(), ValidationError> {
    anthropic_system(request.get("system"))?;
    let list = messages(request)?;
    let mut ids: HashSet<String> = HashSet::new();
    // tool_use ids of the previous assistant turn, waiting for results.
    let mut open: Vec<String> = Vec::new();
    let mut turns = Turns::new("assistant");
    for (i, m) in list.iter().enumerate() {
        let at = Some(i);
        let (obj, role) = turns.next(i, m)?;
        let blocks = content_blocks(at, obj.get("content"))?;
        let waiting = std::mem::take(&mut open);
        let waiting_set: HashSet<&str> = waiting.iter().map(String::as_str).collect();
        let mut answered: HashSet<&str> = HashSet::new();
        let mut past_results = false;
        let mut after_content = false;
        for b in &blocks {
            let Some(kind) = b.get("type").and_then(Value::as_str) else {
                return Err(err(
                    at,
                    Rule::BadContent("a content block needs a `type`".into()),
                ));
            };
            match kind {
                "tool_result" => {
                    if role != "user" {
                        return Err(not_allowed(at, kind, role));
                    }
                    if past_results {
                        return Err(err(at, Rule::ResultNotFirst));
                    }
                    let id = b.get("tool_use_id").and_then(Value::as_str);
                    let id = id.ok_or_else(|| {
                        err(
                            at,
                            Rule::BadContent("a tool_result needs a `tool_use_id`".into()),
                        )
                    })?;
                    answer(at, id, waiting_set.contains(id), &mut answered)?;
                    tool_result_fields(at, b)?;
                    continue;
                }
                "text" => text_block(at, b)?,
                "tool_use" => {
                    if role != "assistant" {
                        return Err(not_allowed(at, kind, role));
                    }
                    let id = tool_use_block(at, b)?;
                    if !ids.insert(id.to_owned()) {
                        return Err(call_err(at, id, |call_id| Rule::DuplicateCallId {
                            call_id,
                        }));
                    }
                    open.push(id.to_owned());
                }
                _ => {
                    anthropic_blocks::check(kind, b, role, after_content).map_err(|r| err(at, r))?
                }
            }
            after_content |= matches!(kind, "text" | "tool_use");
            past_results = true;
        }
        // The last message answering some of the calls before it, and nothing else: the
        // others are still in flight (as OpenAI's tool messages at the end may be).
        let only_results = blocks
            .iter()
            .all(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
        let in_flight = !strict && i + 1 == list.len() && only_results;
        if !in_flight {
            all_answered(&waiting, &answered, i)?;
        }
    }
    if strict && let Some(call_id) = open.first() {
        return Err(call_err(Some(list.len() - 1), call_id, |call_id| {
            Rule::MissingResult { call_id }
        }));
    }
    Ok(())
}

/// A message's content: a non-empty string (no blocks) or a non-empty array of blocks.
fn content_blocks(
    at: Option<usize>,
    content: Option<&Value>,
) -> Result<Vec<&Value>, ValidationError> {
    match content {
        Some(Value::String(s)) => {
            if s.trim().is_empty() {
                return Err(err(at, Rule::EmptyText));
            }
            Ok(Vec::new())
        }
        Some(Value::Array(a)) if !a.is_empty() => Ok(a.iter().collect()),
        Some(Value::Array(_)) => Err(err(at, Rule::BadContent("empty content array".into()))),
        _ => Err(err(
            at,
            Rule::BadContent("content must be a string or an array of blocks".into()),
        )),
    }
}

/// A `tool_result` block's content (a string or blocks) and `is_error` (a boolean).
fn tool_result_fields(at: Option<usize>, b: &Value) -> Result<(), ValidationError> {
    match b.get("content") {
        None | Some(Value::String(_)) => {}
        Some(Value::Array(inner)) => {
            anthropic_blocks::check_result_content(inner).map_err(|r| err(at, r))?
        }
        Some(_) => {
            return Err(err(
                at,
                Rule::BadContent("tool_result content must be a string or blocks".into()),
            ));
        }
    }
    if b.get("is_error").is_some_and(|e| !e.is_boolean()) {
        return Err(err(
            at,
            Rule::BadContent("`is_error` must be a boolean".into()),
        ));
    }
    Ok(())
}

/// A text block holds non-whitespace text.
fn text_block(at: Option<usize>, b: &Value) -> Result<(), ValidationError> {
    match b.get("text").and_then(Value::as_str) {
        Some(t) if !t.trim().is_empty() => Ok(()),
        Some(_) => Err(err(at, Rule::EmptyText)),
        None => Err(err(
            at,
            Rule::BadContent("a text block needs a `text` string".into()),
        )),
    }
}

/// A `tool_use` block's own fields (an id of `[a-zA-Z0-9_-]+`, a name, an object
/// `input`); returns its id.
fn tool_use_block(at: Option<usize>, b: &Value) -> Result<&str, ValidationError> {
    let id = b.get("id").and_then(Value::as_str).unwrap_or("");
    if !valid_tool_id(id) {
        return Err(err(
            at,
            Rule::BadToolCall(format!("tool_use id `{id}` must match [a-zA-Z0-9_-]+")),
        ));
    }
    if b.get("name")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err(err(
            at,
            Rule::BadToolCall(format!("tool_use `{id}` needs a `name`")),
        ));
    }
    if !b.get("input").is_some_and(Value::is_object) {
        return Err(err(
            at,
            Rule::BadToolCall(format!("tool_use `{id}` needs an object `input`")),
        ));
    }
    Ok(id)
}

/// Every call of the turn before message `i` (`waiting`; `open` holds one turn's calls)
/// is answered in message `i`.
fn all_answered(
    waiting: &[String],
    answered: &HashSet<&str>,
    i: usize,
) -> Result<(), ValidationError> {
    match waiting.iter().find(|w| !answered.contains(w.as_str())) {
        Some(missing) => Err(call_err(Some(i - 1), missing, |call_id| {
            Rule::MissingResult { call_id }
        })),
        None => Ok(()),
    }
}
