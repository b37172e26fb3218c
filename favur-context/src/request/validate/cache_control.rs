//! Anthropic prompt-cache breakpoints: how many, what they hold, where they sit.
//!
//! Anthropic's prompt-caching documentation: "You can define up to 4 cache breakpoints"
//! per request (in `tools`, `system` and `messages`); `cache_control` is
//! `{"type": "ephemeral"}` with an optional `ttl` (`"5m"` or `"1h"`); thinking blocks
//! cannot be marked directly, nor can empty text blocks.

use serde_json::Value;

use super::{Rule, ValidationError, err};

/// The most `cache_control` breakpoints one Anthropic request may hold.
///
/// ```
/// use favur_context::render::validate::{validate_anthropic_strict, Rule, MAX_CACHE_BREAKPOINTS};
/// let marked = serde_json::json!({"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}});
/// let request = |n: usize| serde_json::json!({
///     "system": vec![marked.clone(); n],
///     "messages": [{"role": "user", "content": "hi"}],
/// });
/// assert!(validate_anthropic_strict(&request(MAX_CACHE_BREAKPOINTS)).is_ok());
/// let err = validate_anthropic_strict(&request(MAX_CACHE_BREAKPOINTS + 1)).unwrap_err();
/// assert_eq!(err.rule, Rule::TooManyCacheBreakpoints { found: 5, max: 4 });
/// ```
pub const MAX_CACHE_BREAKPOINTS: usize = 4;

/// Block types that cannot carry a `cache_control` marker.
const NOT_CACHEABLE: [&str; 2] = ["thinking", "redacted_thinking"];

fn marker(block: &Value, index: Option<usize>) -> Result<usize, ValidationError> {
    let Some(cc) = block.get("cache_control") else {
        return Ok(0);
    };
    let bad = |why: String| err(index, Rule::BadCacheControl(why));
    if cc.get("type").and_then(Value::as_str) != Some("ephemeral") {
        return Err(bad("`type` must be \"ephemeral\"".into()));
    }
    match cc.get("ttl") {
        None => {}
        Some(Value::String(t)) if t == "5m" || t == "1h" => {}
        Some(_) => return Err(bad("`ttl` must be \"5m\" or \"1h\"".into())),
    }
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    if NOT_CACHEABLE.contains(&kind) {
        return Err(bad(format!("a `{kind}` block cannot carry one")));
    }
    if kind == "text" && block.get("text").and_then(Value::as_str) == Some("") {
        return Err(bad("an empty text block cannot carry one".into()));
    }
    Ok(1)
}

/// Counts the markers of a list of blocks, those nested in `tool_result` content too.
fn count(blocks: &[Value], index: Option<usize>) -> Result<usize, ValidationError> {
    let mut n = 0;
    for b in blocks {
        n += marker(b, index)?;
        if let Some(Value::Array(inner)) = b.get("content") {
            n += count(inner, index)?;
        }
    }
    Ok(n)
}

/// Checks every `cache_control` of an Anthropic request and their number.
pub(super) fn check(request: &Value) -> Result<(), ValidationError> {
    let mut found = 0;
    if let Some(Value::Array(tools)) = request.get("tools") {
        found += count(tools, None)?;
    }
    if let Some(Value::Array(system)) = request.get("system") {
        found += count(system, None)?;
    }
    let messages = match request {
        Value::Array(m) => m.as_slice(),
        _ => match request.get("messages") {
            Some(Value::Array(m)) => m.as_slice(),
            _ => &[],
        },
    };
    for (i, m) in messages.iter().enumerate() {
        if m.get("cache_control").is_some() {
            return Err(err(
                Some(i),
                Rule::BadCacheControl("it goes on a content block, not on the message".into()),
            ));
        }
        if let Some(Value::Array(blocks)) = m.get("content") {
            found += count(blocks, Some(i))?;
        }
        if found > MAX_CACHE_BREAKPOINTS {
            return Err(err(
                Some(i),
                Rule::TooManyCacheBreakpoints {
                    found,
                    max: MAX_CACHE_BREAKPOINTS,
                },
            ));
        }
    }
    if found > MAX_CACHE_BREAKPOINTS {
        return Err(err(
            None,
            Rule::TooManyCacheBreakpoints {
                found,
                max: MAX_CACHE_BREAKPOINTS,
            },
        ));
    }
    Ok(())
}
