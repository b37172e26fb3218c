//! Anthropic Messages responses.

use serde_json::Value;

use super::{
    Reply, ReplyError, StopReason, Usage, body_array, malformed, opt_str, opt_u64, req_str,
    type_name,
};
use crate::model::message::{Arguments, ToolCall};

/// Parses a whole (non-streamed) response.
pub(super) fn parse(v: &Value) -> Result<Reply, ReplyError> {
    let blocks = body_array(v, "content")?;
    let mut text = String::new();
    let mut calls = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let at = format!("content[{i}]");
        match req_str(b, "type", &at)? {
            "text" => text.push_str(req_str(b, "text", &at)?),
            "tool_use" => calls.push(tool_use(b, &at)?),
            // Thinking, redacted thinking, server tool blocks: not part of the message.
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
    ))
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
