//! Streamed replies: server-sent events assembled into a [`Reply`].

use serde_json::Value;

use super::sse::SseDecoder;
use super::{Reply, ReplyError, StopReason, Usage, anthropic, api_error, openai, type_name};
use crate::model::message::{Arguments, ToolCall};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Provider {
    OpenAi,
    Anthropic,
    Responses,
}

/// Where a block sits among the blocks being assembled: the one text block OpenAI's text
/// deltas (and the Responses API's) go to, or a block the provider numbers (an OpenAI
/// tool call's `index`, an Anthropic content block's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// The text of an OpenAI or Responses stream, ahead of the calls.
    Text,
    /// The provider's index.
    At(u64),
}

impl std::fmt::Display for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Slot::Text => f.write_str("text"),
            Slot::At(i) => write!(f, "{i}"),
        }
    }
}

/// One content block or tool call being assembled.
#[derive(Debug, Clone)]
enum Block {
    Text(String),
    Call {
        id: Option<String>,
        name: String,
        arguments: String,
        /// Anthropic's `input` from `content_block_start`, used when no delta follows.
        input: Option<Value>,
    },
    /// Anthropic thinking or redacted thinking.
    Thinking(crate::model::parts::Reasoning),
    Other,
}

/// Assembles a streamed reply: OpenAI Chat Completions chunks (`choices[0].delta` with
/// text and tool-call argument deltas, ending with `data: [DONE]`) or Anthropic Messages
/// events (`content_block_start`/`_delta`/`_stop` with `text_delta`,
/// `input_json_delta`, `thinking_delta` and `signature_delta`, ending with
/// `message_stop`; thinking blocks are kept as [`Reasoning`](crate::message::Reasoning) parts), or
/// OpenAI Responses events (see [`ReplyStream::responses`]). Feed it the raw bytes as they arrive.
///
/// ```
/// use favur_context::reply::{ReplyStream, StopReason};
/// let mut stream = ReplyStream::openai();
/// stream.feed(br#"data: {"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":""}}]}}]}
///
/// data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":"}}]}}]}
///
/// data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"ls\"}"}}]}}]}
///
/// data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}
///
/// data: [DONE]
///
/// "#)?;
/// let reply = stream.finish()?;
/// assert_eq!(reply.stop_reason(), &StopReason::ToolCalls);
/// assert_eq!(reply.tool_calls()[0].arguments.as_json().unwrap()["command"], "ls");
/// # Ok::<(), favur_context::reply::ReplyError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ReplyStream {
    provider: Provider,
    sse: SseDecoder,
    events: usize,
    blocks: Vec<(Slot, Block)>,
    stop: Option<StopReason>,
    usage: Option<Usage>,
    input_usage: Option<Value>,
    refusal: String,
    model: Option<String>,
    done: bool,
    /// The Responses stream's final `response` object.
    response: Option<Value>,
}

impl ReplyStream {
    fn new(provider: Provider) -> Self {
        ReplyStream {
            provider,
            sse: SseDecoder::default(),
            events: 0,
            blocks: Vec::new(),
            stop: None,
            usage: None,
            input_usage: None,
            refusal: String::new(),
            model: None,
            done: false,
            response: None,
        }
    }

    /// A stream of OpenAI Chat Completions chunks.
    pub fn openai() -> Self {
        ReplyStream::new(Provider::OpenAi)
    }

    /// A stream of Anthropic Messages events.
    pub fn anthropic() -> Self {
        ReplyStream::new(Provider::Anthropic)
    }

    /// A stream of OpenAI Responses events: `response.output_text.delta` events give the
    /// text as it streams, and the `response` of `response.completed` (or
    /// `response.incomplete`) is the reply, read as
    /// [`Reply::from_responses`](super::Reply::from_responses) reads a body.
    ///
    /// ```
    /// let mut s = favur_context::reply::ReplyStream::responses();
    /// s.push_data(r#"{"type":"response.output_text.delta","delta":"Hi"}"#)?;
    /// assert_eq!(s.text(), "Hi");
    /// s.push_data(r#"{"type":"response.completed","response":{"status":"completed","output":[
    ///   {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi"}]}]}}"#)?;
    /// assert_eq!(s.finish()?.text(), "Hi");
    /// # Ok::<(), favur_context::reply::ReplyError>(())
    /// ```
    pub fn responses() -> Self {
        ReplyStream::new(Provider::Responses)
    }

    /// Feeds raw bytes of the response body.
    ///
    /// # Errors
    ///
    /// [`ReplyError::Event`] for an event that is not JSON or is malformed (naming the
    /// event's index and the field or block), [`ReplyError::Api`] for an error event.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), ReplyError> {
        for data in self.sse.feed(chunk) {
            self.push_data(&data)?;
        }
        Ok(())
    }

    /// Feeds the data of one event (what follows `data:`), for callers that split the
    /// events themselves.
    ///
    /// # Errors
    ///
    /// As for [`feed`](ReplyStream::feed).
    ///
    /// ```
    /// let mut s = favur_context::reply::ReplyStream::anthropic();
    /// let err = s.push_data("{not json").unwrap_err();
    /// assert!(err.to_string().starts_with("stream event 0: not JSON"), "{err}");
    /// ```
    pub fn push_data(&mut self, data: &str) -> Result<(), ReplyError> {
        let event = self.events;
        self.events += 1;
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let v: Value = serde_json::from_str(data).map_err(|e| ReplyError::Event {
            event,
            problem: format!("not JSON: {e}"),
        })?;
        if let Some(e) = api_error(&v) {
            return Err(e);
        }
        let bad = |problem: String| ReplyError::Event { event, problem };
        match self.provider {
            Provider::OpenAi => self.openai_chunk(&v).map_err(bad),
            Provider::Anthropic => self.anthropic_event(&v).map_err(bad),
            Provider::Responses => self.responses_event(v, event),
        }
    }

    /// The text received so far (to show it as it streams).
    ///
    /// ```
    /// let mut s = favur_context::reply::ReplyStream::openai();
    /// s.push_data(r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#).unwrap();
    /// s.push_data(r#"{"choices":[{"index":0,"delta":{"content":"lo"}}]}"#).unwrap();
    /// assert_eq!(s.text(), "Hello");
    /// ```
    pub fn text(&self) -> String {
        self.blocks
            .iter()
            .filter_map(|(_, b)| match b {
                Block::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Ends the stream and returns the reply.
    ///
    /// # Errors
    ///
    /// [`ReplyError::Incomplete`] if the stream stopped before its end (no `[DONE]`,
    /// `finish_reason` or `message_stop`), or a tool call never got its id or name.
    ///
    /// ```
    /// let mut s = favur_context::reply::ReplyStream::openai();
    /// s.push_data(r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#).unwrap();
    /// assert!(matches!(s.finish(), Err(favur_context::reply::ReplyError::Incomplete(_))));
    /// ```
    pub fn finish(mut self) -> Result<Reply, ReplyError> {
        if let Some(data) = self.sse.finish() {
            self.push_data(&data)?;
        }
        if !self.done && self.stop.is_none() {
            return Err(ReplyError::Incomplete(
                "the stream ended before its last event".to_owned(),
            ));
        }
        if let Some(response) = &self.response {
            return super::responses::parse(response);
        }
        let mut text = String::new();
        let mut calls = Vec::new();
        let mut reasoning = Vec::new();
        for (index, block) in self.blocks {
            match block {
                Block::Text(t) => text.push_str(&t),
                Block::Call {
                    id,
                    name,
                    arguments,
                    input,
                } => {
                    let what = match self.provider {
                        Provider::OpenAi => "tool call",
                        Provider::Anthropic | Provider::Responses => "content block",
                    };
                    let id = id.ok_or_else(|| {
                        ReplyError::Incomplete(format!("{what} {index} never got an id"))
                    })?;
                    if name.is_empty() {
                        return Err(ReplyError::Incomplete(format!(
                            "{what} {index} never got a name"
                        )));
                    }
                    let arguments = match input {
                        Some(v) if arguments.trim().is_empty() => Arguments::Json(v),
                        _ => openai::arguments(Some(&Value::String(arguments))),
                    };
                    calls.push(ToolCall::new(id, name, arguments));
                }
                Block::Thinking(r) => reasoning.push(r),
                Block::Other => {}
            }
        }
        let usage = self.usage.or_else(|| {
            self.input_usage
                .as_ref()
                .and_then(|u| anthropic::usage(u, None))
        });
        Ok(Reply::assemble(
            text,
            calls,
            self.stop.unwrap_or(StopReason::Unknown),
            usage,
            Some(self.refusal),
            self.model,
        )
        .with_reasoning(reasoning))
    }

    /// The block the provider numbers `index`.
    fn block(&mut self, index: u64) -> Option<&mut Block> {
        self.slot(Slot::At(index))
    }

    fn slot(&mut self, slot: Slot) -> Option<&mut Block> {
        self.blocks
            .iter_mut()
            .find(|(s, _)| *s == slot)
            .map(|(_, b)| b)
    }

    fn openai_chunk(&mut self, v: &Value) -> Result<(), String> {
        if let Some(m) = v.get("model").and_then(Value::as_str) {
            self.model = Some(m.to_owned());
        }
        if let Some(u) = openai::usage(v.get("usage")) {
            self.usage = Some(u);
        }
        let Some(choices) = optional_array(v.get("choices"), "choices")? else {
            return Ok(());
        };
        for (ci, choice) in choices.iter().enumerate() {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue; // only the first choice is assembled
            }
            if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
                self.stop = Some(StopReason::from_openai(r));
            }
            let Some(delta) = choice.get("delta").filter(|d| !d.is_null()) else {
                continue;
            };
            let at = format!("choices[{ci}].delta");
            match delta.get("content") {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) => self.push_text(s),
                Some(other) => {
                    return Err(format!(
                        "{at}.content: expected a string, found {}",
                        type_name(other)
                    ));
                }
            }
            if let Some(r) = delta.get("refusal").and_then(Value::as_str) {
                self.refusal.push_str(r);
            }
            let Some(calls) = optional_array(delta.get("tool_calls"), &format!("{at}.tool_calls"))?
            else {
                continue;
            };
            for (k, c) in calls.iter().enumerate() {
                self.openai_call_delta(&format!("{at}.tool_calls[{k}]"), c)?;
            }
        }
        Ok(())
    }

    /// One tool call delta `c` (at `cat`): a new call at its index, or more of its name
    /// and arguments.
    fn openai_call_delta(&mut self, cat: &str, c: &Value) -> Result<(), String> {
        let index = c
            .get("index")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("{cat}.index: missing or not an integer"))?;
        if self.block(index).is_none() {
            self.blocks.push((
                Slot::At(index),
                Block::Call {
                    id: None,
                    name: String::new(),
                    arguments: String::new(),
                    input: None,
                },
            ));
        }
        let Some(Block::Call {
            id,
            name,
            arguments,
            ..
        }) = self.block(index)
        else {
            return Err(format!("{cat}: tool call {index} clashes with text"));
        };
        if let Some(s) = c.get("id").and_then(Value::as_str) {
            *id = Some(s.to_owned());
        }
        let f = c.get("function");
        if let Some(s) = f.and_then(|f| f.get("name")).and_then(Value::as_str) {
            name.push_str(s);
        }
        match f.and_then(|f| f.get("arguments")) {
            None | Some(Value::Null) => Ok(()),
            Some(Value::String(s)) => {
                arguments.push_str(s);
                Ok(())
            }
            Some(other) => Err(format!(
                "{cat}.function.arguments: expected a string, found {}",
                type_name(other)
            )),
        }
    }

    /// Text deltas: OpenAI's go to one text block ([`Slot::Text`], before the calls).
    fn push_text(&mut self, s: &str) {
        match self.slot(Slot::Text) {
            Some(Block::Text(t)) => t.push_str(s),
            _ => self
                .blocks
                .insert(0, (Slot::Text, Block::Text(s.to_owned()))),
        }
    }

    /// One Responses event: text deltas, the final response, errors.
    fn responses_event(&mut self, v: Value, event: usize) -> Result<(), ReplyError> {
        let bad = |problem: String| ReplyError::Event { event, problem };
        match v.get("type").and_then(Value::as_str) {
            Some("response.output_text.delta") => {
                let delta = v.get("delta").and_then(Value::as_str);
                let delta = delta.ok_or_else(|| bad("a text delta without `delta`".into()))?;
                self.push_text(delta);
            }
            Some("error") => {
                let kind = v.get("code").and_then(Value::as_str).map(str::to_owned);
                let message = v.get("message").and_then(Value::as_str).unwrap_or("error");
                let message = message.to_owned();
                return Err(ReplyError::Api { kind, message });
            }
            Some("response.failed") => {
                let failed = v.get("response").cloned().unwrap_or(Value::Null);
                return Err(api_error(&failed).unwrap_or_else(|| ReplyError::Api {
                    kind: None,
                    message: "the response failed".into(),
                }));
            }
            Some("response.completed" | "response.incomplete") => {
                let response = v.get("response").filter(|r| r.is_object());
                let response = response.ok_or_else(|| bad("no `response` object".into()))?;
                self.response = Some(response.clone());
                self.done = true;
            }
            Some(_) => {}
            None => return Err(bad("`type`: missing".into())),
        }
        Ok(())
    }

    fn anthropic_event(&mut self, v: &Value) -> Result<(), String> {
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .ok_or("`type`: missing")?;
        let index = || {
            v.get("index")
                .and_then(Value::as_u64)
                .ok_or_else(|| format!("{kind}: `index` missing or not an integer"))
        };
        match kind {
            "message_start" => {
                let m = v.get("message").ok_or("message_start: `message` missing")?;
                self.model = m.get("model").and_then(Value::as_str).map(str::to_owned);
                self.input_usage = m.get("usage").cloned();
            }
            "content_block_start" => {
                let i = index()?;
                if self.block(i).is_some() {
                    return Err(format!("content block {i} started twice"));
                }
                let b = v
                    .get("content_block")
                    .ok_or_else(|| format!("content block {i}: `content_block` missing"))?;
                let block = anthropic_block(i, b)?;
                self.blocks.push((Slot::At(i), block));
            }
            "content_block_delta" => {
                let i = index()?;
                let d = v
                    .get("delta")
                    .ok_or_else(|| format!("content block {i}: `delta` missing"))?;
                let block = self.block(i).ok_or_else(|| {
                    format!("delta for content block {i}, which was never started")
                })?;
                anthropic_delta(i, block, d)?;
            }
            "content_block_stop" => {
                let i = index()?;
                if self.block(i).is_none() {
                    return Err(format!("content block {i} stopped but never started"));
                }
            }
            "message_delta" => self.anthropic_message_delta(v),
            "message_stop" => self.done = true,
            _ => {} // ping and future event types
        }
        Ok(())
    }

    /// A `message_delta`: the stop reason, and the output tokens added to the input usage
    /// of `message_start`.
    fn anthropic_message_delta(&mut self, v: &Value) {
        if let Some(r) = v
            .get("delta")
            .and_then(|d| d.get("stop_reason"))
            .and_then(Value::as_str)
        {
            self.stop = Some(StopReason::from_anthropic(r));
        }
        if let Some(out) = v
            .get("usage")
            .and_then(|u| u.get("output_tokens"))
            .and_then(Value::as_u64)
        {
            let base = self.input_usage.clone().unwrap_or(Value::Null);
            self.usage = anthropic::usage(&base, Some(out)).or(Some(Usage {
                input_tokens: 0,
                output_tokens: out,
            }));
        }
    }
}

/// The block a `content_block_start` (content block `i`) opens.
fn anthropic_block(i: u64, b: &Value) -> Result<Block, String> {
    Ok(match b.get("type").and_then(Value::as_str) {
        Some("text") => Block::Text(
            b.get("text")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        ),
        Some("tool_use") => {
            let call =
                anthropic::tool_use(b, &format!("content block {i}")).map_err(|e| e.to_string())?;
            let input = call
                .arguments
                .as_json()
                .filter(|v| v.as_object().is_some_and(|o| !o.is_empty()))
                .cloned();
            Block::Call {
                id: Some(call.id),
                name: call.name,
                arguments: String::new(),
                input: input.or(Some(Value::Object(Default::default()))),
            }
        }
        Some("thinking" | "redacted_thinking") => Block::Thinking(
            anthropic::thinking(b, &format!("content block {i}")).map_err(|e| e.to_string())?,
        ),
        Some(_) => Block::Other,
        None => return Err(format!("content block {i}: `type` missing")),
    })
}

/// A `content_block_delta` `d` added to content block `i`.
fn anthropic_delta(i: u64, block: &mut Block, d: &Value) -> Result<(), String> {
    let dkind = d.get("type").and_then(Value::as_str).unwrap_or("");
    match (dkind, block) {
        ("text_delta", Block::Text(t)) => t.push_str(
            d.get("text")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("content block {i}: text_delta without `text`"))?,
        ),
        ("input_json_delta", Block::Call { arguments, .. }) => arguments.push_str(
            d.get("partial_json")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    format!("content block {i}: input_json_delta without `partial_json`")
                })?,
        ),
        (_, Block::Other) => {}
        (k, Block::Thinking(r)) => {
            anthropic::thinking_delta(r, k, d).map_err(|e| format!("content block {i}: {e}"))?;
        }
        ("text_delta" | "input_json_delta", _) => {
            return Err(format!(
                "content block {i}: a {dkind} does not fit this block's type"
            ));
        }
        _ => {} // thinking and signature deltas
    }
    Ok(())
}

/// A field that is absent, null or an array: the array, if any; anything else is an
/// error naming `at`.
fn optional_array<'v>(
    field: Option<&'v Value>,
    at: &str,
) -> Result<Option<&'v Vec<Value>>, String> {
    match field {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(other) => Err(format!(
            "{at}: expected an array, found {}",
            type_name(other)
        )),
    }
}
