//! Anthropic Messages responses.

use serde_json::Value;

use super::{
    Reply, ReplyError, StopReason, Usage, body_array, malformed, opt_str, opt_u64, req_str,
    type_name,
};
use crate::model::message::{Arguments, ToolCall};
use crate::model::parts::Reasoning;

/// Parses a whole (non-streamed) response.
pub(super) fn parse(v: &Value) -> Result<Reply, ReplyError> {
    let blocks = body_array(v, "content")?;
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut reasoning = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let at = format!("content[{i}]");
        match req_str(b, "type", &at)? {
            "text" => text.push_str(req_str(b, "text", &at)?),
            "tool_use" => calls.push(tool_use(b, &at)?),
            "thinking" | "redacted_thinking" => reasoning.push(thinking(b, &at)?),
            // Server tool blocks: not part of the message.
            _ => {}
        }
    }
    let stop = opt_str(v, "stop_reason", "the body")?
        .map_or(StopReason::Unknown, StopReason::from_anthropic);
    Ok(Reply::assemble(
        text,
        calls,
        stop,
        v.get("usage").and_then(|u| usage(u, None)),
        None,
        opt_str(v, "model", "the body")?.map(str::to_owned),
    )
    .with_reasoning(reasoning))
}

/// A `thinking` block (its text and signature) or a `redacted_thinking` block (its
/// data), kept as they came so that they can be sent back unchanged.
pub(super) fn thinking(b: &Value, at: &str) -> Result<Reasoning, ReplyError> {
    if req_str(b, "type", at)? == "redacted_thinking" {
        return Ok(Reasoning::anthropic_redacted(req_str(b, "data", at)?));
    }
    let text = opt_str(b, "thinking", at)?.unwrap_or_default();
    let mut r = Reasoning::anthropic(text, opt_str(b, "signature", at)?.unwrap_or_default());
    r.signature = r.signature.filter(|s| !s.is_empty());
    Ok(r)
}

/// A streamed `thinking_delta` or `signature_delta` added to `r`; whether it was one.
pub(super) fn thinking_delta(r: &mut Reasoning, kind: &str, d: &Value) -> Result<bool, String> {
    let piece = |key: &str| {
        d.get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| format!("a {kind} without `{key}`"))
    };
    match kind {
        "thinking_delta" => match r.text.last_mut() {
            Some(t) => t.push_str(piece("thinking")?),
            None => r.text.push(piece("thinking")?.to_owned()),
        },
        "signature_delta" => r
            .signature
            .get_or_insert_with(String::new)
            .push_str(piece("signature")?),
        _ => return Ok(false),
    }
    Ok(true)
}

/// A `tool_use` block (whole, or as a stream's `content_block_start`).
pub(super) fn tool_use(b: &Value, at: &str) -> Result<ToolCall, ReplyError> {
    let id = req_str(b, "id", at)?;
    let name = req_str(b, "name", at)?;
    if name.is_empty() {
        return Err(malformed(format!("{at}.name"), "empty"));
    }
    let input = match b.get("input") {
        Some(v @ Value::Object(_)) => v.clone(),
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(other) => {
            return Err(malformed(
                format!("{at}.input"),
                format!("expected an object, found {}", type_name(other)),
            ));
        }
    };
    Ok(ToolCall::new(id, name, Arguments::Json(input)))
}

/// `usage`: input tokens including cache reads and writes; `output` overrides the output
/// count (a stream reports it in `message_delta`).
pub(super) fn usage(u: &Value, output: Option<u64>) -> Option<Usage> {
    let input = opt_u64(u, "input_tokens")?;
    let cached = opt_u64(u, "cache_read_input_tokens").unwrap_or(0)
        + opt_u64(u, "cache_creation_input_tokens").unwrap_or(0);
    Some(Usage {
        input_tokens: input + cached,
        output_tokens: output.or_else(|| opt_u64(u, "output_tokens")).unwrap_or(0),
    })
}
