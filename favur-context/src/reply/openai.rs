//! OpenAI Chat Completions responses.

use serde_json::Value;

use super::{
    Reply, ReplyError, StopReason, Usage, body_array, malformed, opt_str, opt_u64, req_str,
    type_name,
};
use crate::model::message::{Arguments, ToolCall};

/// Parses a whole (non-streamed) response.
pub(super) fn parse(v: &Value) -> Result<Reply, ReplyError> {
    let choices = body_array(v, "choices")?;
    // The first choice (`n` = 1): the one whose `index` is 0, else the first listed.
    let at_index = choices
        .iter()
        .position(|c| c.get("index").and_then(Value::as_u64) == Some(0))
        .unwrap_or(0);
    let choice = choices
        .get(at_index)
        .ok_or_else(|| malformed("choices", "no choices"))?;
    let at = format!("choices[{at_index}]");
    let message = match choice.get("message") {
        Some(m @ Value::Object(_)) => m,
        Some(other) => {
            return Err(malformed(
                format!("{at}.message"),
                format!("expected an object, found {}", type_name(other)),
            ));
        }
        None => return Err(malformed(format!("{at}.message"), "missing")),
    };
    let mat = format!("{at}.message");
    let text = content_text(message.get("content"), &format!("{mat}.content"))?;
    let refusal = opt_str(message, "refusal", &mat)?.map(str::to_owned);
    let calls = tool_calls(message.get("tool_calls"), &format!("{mat}.tool_calls"))?;
    let stop =
        opt_str(choice, "finish_reason", &at)?.map_or(StopReason::Unknown, StopReason::from_openai);
    Ok(Reply::assemble(
        text,
        calls,
        stop,
        usage(v.get("usage")),
        refusal,
        opt_str(v, "model", "the body")?.map(str::to_owned),
    ))
}

/// `usage.prompt_tokens` / `usage.completion_tokens`, if reported.
pub(super) fn usage(u: Option<&Value>) -> Option<Usage> {
    let u = u.filter(|u| u.is_object())?;
    Some(Usage {
        input_tokens: opt_u64(u, "prompt_tokens")?,
        output_tokens: opt_u64(u, "completion_tokens").unwrap_or(0),
    })
}

/// `content`: null, a string, or (some compatible servers) an array of text parts.
fn content_text(content: Option<&Value>, at: &str) -> Result<String, ReplyError> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut out = String::new();
            for (i, p) in parts.iter().enumerate() {
                let pat = format!("{at}[{i}]");
                match opt_str(p, "type", &pat)? {
                    Some("text") | None => out.push_str(req_str(p, "text", &pat)?),
                    // Other part types (audio, ...) carry no text.
                    Some(_) => {}
                }
            }
            Ok(out)
        }
        Some(other) => Err(malformed(
            at,
            format!(
                "expected a string, an array or null, found {}",
                type_name(other)
            ),
        )),
    }
}

/// `tool_calls`: absent, null, or an array of function calls.
fn tool_calls(calls: Option<&Value>, at: &str) -> Result<Vec<ToolCall>, ReplyError> {
    let calls = match calls {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(other) => {
            return Err(malformed(
                at,
                format!("expected an array, found {}", type_name(other)),
            ));
        }
    };
    let mut out = Vec::with_capacity(calls.len());
    for (i, c) in calls.iter().enumerate() {
        let cat = format!("{at}[{i}]");
        if let Some(kind) = opt_str(c, "type", &cat)?
            && kind != "function"
        {
            return Err(malformed(
                format!("{cat}.type"),
                format!("unsupported tool call type {kind:?} (expected \"function\")"),
            ));
        }
        let id = req_str(c, "id", &cat)?;
        let function = c
            .get("function")
            .filter(|f| f.is_object())
            .ok_or_else(|| malformed(format!("{cat}.function"), "missing"))?;
        let fat = format!("{cat}.function");
        let name = req_str(function, "name", &fat)?;
        if name.is_empty() {
            return Err(malformed(format!("{fat}.name"), "empty"));
        }
        out.push(ToolCall::new(
            id,
            name,
            arguments(function.get("arguments")),
        ));
    }
    Ok(out)
}

/// `function.arguments`: JSON text (kept raw if invalid); an object is taken as it is.
pub(super) fn arguments(v: Option<&Value>) -> Arguments {
    match v {
        None | Some(Value::Null) => Arguments::Json(Value::Object(Default::default())),
        Some(Value::String(s)) if s.trim().is_empty() => {
            Arguments::Json(Value::Object(Default::default()))
        }
        Some(Value::String(s)) => Arguments::parse(s.as_str()),
        Some(other) => Arguments::Json(other.clone()),
    }
}
