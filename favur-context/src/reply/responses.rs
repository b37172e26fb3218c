//! OpenAI Responses response bodies: the `output` items.

use serde_json::Value;

use super::{
    Reply, ReplyError, StopReason, Usage, body_array, malformed, opt_str, opt_u64, req_str,
};
use crate::model::extensions::ITEM_IDS_EXTENSION;
use crate::model::message::ToolCall;
use crate::model::parts::Reasoning;

/// Parses a whole (non-streamed) response: `reasoning` items (id, summary texts,
/// `encrypted_content` when `include`d), `message` items (`output_text`, `refusal`; their
/// ids kept in the `favur_item_ids` extension) and `function_call` items (`id` kept as
/// the call's `provider_id`). Built-in tool items are not part of the message.
pub(super) fn parse(v: &Value) -> Result<Reply, ReplyError> {
    let items = body_array(v, "output")?;
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut reasoning = Vec::new();
    let mut ids = Vec::new();
    let mut refusal = None;
    for (i, item) in items.iter().enumerate() {
        let at = format!("output[{i}]");
        match req_str(item, "type", &at)? {
            "reasoning" => reasoning.push(reasoning_item(item, &at)?),
            "message" => {
                if let Some(id) = opt_str(item, "id", &at)? {
                    ids.push(Value::String(id.to_owned()));
                }
                for (k, c) in super::elements(item, "content") {
                    let at = format!("{at}.content[{k}]");
                    match req_str(c, "type", &at)? {
                        "output_text" => text.push_str(req_str(c, "text", &at)?),
                        "refusal" => refusal = Some(req_str(c, "refusal", &at)?.to_owned()),
                        _ => {}
                    }
                }
            }
            "function_call" => calls.push(function_call(item, &at)?),
            _ => {}
        }
    }
    let stop = if !calls.is_empty() {
        StopReason::ToolCalls
    } else {
        stop_reason(v)?
    };
    let usage = v.get("usage").and_then(|u| {
        Some(Usage {
            input_tokens: opt_u64(u, "input_tokens")?,
            output_tokens: opt_u64(u, "output_tokens").unwrap_or(0),
        })
    });
    let mut reply = Reply::assemble(
        text,
        calls,
        stop,
        usage,
        refusal,
        opt_str(v, "model", "the body")?.map(str::to_owned),
    )
    .with_reasoning(reasoning);
    if !ids.is_empty() && reply.message.parts.iter().any(|p| p.text().is_some()) {
        reply
            .message
            .extensions
            .insert(ITEM_IDS_EXTENSION.into(), Value::Array(ids));
    }
    Ok(reply)
}

/// A `reasoning` item (at `at`): its id, summary texts and encrypted content.
fn reasoning_item(item: &Value, at: &str) -> Result<Reasoning, ReplyError> {
    let mut summary = Vec::new();
    for (k, s) in super::elements(item, "summary") {
        summary.push(req_str(s, "text", &format!("{at}.summary[{k}]"))?.to_owned());
    }
    let encrypted = opt_str(item, "encrypted_content", at)?.map(str::to_owned);
    Ok(Reasoning::openai(
        req_str(item, "id", at)?,
        summary,
        encrypted,
    ))
}

/// A `function_call` item (at `at`) as a call, its item `id` kept as the provider's.
fn function_call(item: &Value, at: &str) -> Result<ToolCall, ReplyError> {
    let name = req_str(item, "name", at)?;
    if name.is_empty() {
        return Err(malformed(format!("{at}.name"), "empty"));
    }
    let arguments = super::openai::arguments(item.get("arguments"));
    let mut call = ToolCall::new(req_str(item, "call_id", at)?, name, arguments);
    call.provider_id = opt_str(item, "id", at)?.map(str::to_owned);
    Ok(call)
}

/// Why a response without calls stopped, from its `status` and incomplete details.
fn stop_reason(v: &Value) -> Result<StopReason, ReplyError> {
    Ok(match opt_str(v, "status", "the body")? {
        Some("completed") => StopReason::EndTurn,
        Some("incomplete") => match v
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str)
        {
            Some("max_output_tokens") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::Refused,
            Some(other) => StopReason::Other(other.to_owned()),
            None => StopReason::Other("incomplete".to_owned()),
        },
        Some(other) => StopReason::Other(other.to_owned()),
        None => StopReason::Unknown,
    })
}
