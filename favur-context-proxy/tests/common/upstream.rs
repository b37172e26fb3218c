//! A scripted provider on 127.0.0.1: checks every request it receives with the library's
//! strict validators, records it with the exact bytes it answered, and answers in the
//! request's format (JSON, or server-sent events when the body asks to stream), from a
//! script of replies when one is given.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Response, StatusCode};
use favur_context::render::validate::{
    validate_anthropic_strict, validate_gemini_strict, validate_openai_strict,
    validate_responses_strict,
};
use serde_json::{Value, json};

/// One request the upstream received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    /// The query string, without `?`.
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// The bytes it answered (the whole stream, for a streamed answer).
    pub answer: Bytes,
}

#[derive(Default)]
pub struct Log {
    pub seen: Vec<Seen>,
    /// Validator errors, with the path.
    pub invalid: Vec<String>,
    /// Replies to give in order (else `ok N`).
    pub script: Vec<String>,
    /// Answer every request with this status and body instead.
    pub fail: Option<(u16, String)>,
}

#[derive(Clone)]
pub struct Upstream {
    pub url: String,
    pub log: Arc<Mutex<Log>>,
}

impl Upstream {
    pub async fn start() -> Upstream {
        let log = Arc::new(Mutex::new(Log::default()));
        let app = Router::new().fallback(answer).with_state(Arc::clone(&log));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Upstream { url, log }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.log.lock().unwrap().seen.clone()
    }

    pub fn invalid(&self) -> Vec<String> {
        self.log.lock().unwrap().invalid.clone()
    }

    /// What the upstream received, checked: no request invalid (else `what`, with the
    /// reasons) and `count` of them.
    #[track_caller]
    pub fn seen_valid(&self, count: usize, what: &str) -> Vec<Seen> {
        assert_eq!(self.invalid(), Vec::<String>::new(), "{what}");
        let seen = self.seen();
        assert_eq!(seen.len(), count);
        seen
    }
}

async fn answer(State(log): State<Arc<Mutex<Log>>>, request: Request) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let path = parts.uri.path().to_owned();
    let query = parts.uri.query().map(str::to_owned);
    let gemini = gemini_method(&path);
    // Gemini's OpenAI-compatible endpoint takes and answers Chat Completions.
    let format_path = match path.as_str() {
        "/v1beta/openai/chat/completions" => "/v1/chat/completions",
        p => p,
    };
    let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (status, content_type, chunks) = {
        let mut log = log.lock().unwrap();
        let checked = match format_path {
            "/v1/chat/completions" => Some(validate_openai_strict(&value)),
            "/v1/messages" => Some(validate_anthropic_strict(&value)),
            "/v1/responses" => Some(validate_responses_strict(&value)),
            _ if gemini.is_some() => Some(validate_gemini_strict(&value)),
            _ => None,
        };
        if let Some(Err(e)) = checked {
            log.invalid.push(format!("{path}: {e}"));
        }
        let n = log.seen.len();
        let reply = log
            .script
            .get(n)
            .cloned()
            .unwrap_or_else(|| format!("ok {n}"));
        let stream = value.get("stream").and_then(Value::as_bool) == Some(true);
        match &log.fail {
            Some((status, text)) => (*status, "application/json", vec![text.clone()]),
            None => {
                let sse = query
                    .as_deref()
                    .is_some_and(|q| q.split('&').any(|p| p == "alt=sse"));
                let (ct, chunks) = match gemini {
                    Some(method) => gemini_reply(&reply, method == "streamGenerateContent", sse),
                    None => reply_in_format(format_path, &reply, stream),
                };
                (200, ct, chunks)
            }
        }
    };
    let answer: String = chunks.concat();
    log.lock().unwrap().seen.push(Seen {
        method: parts.method.to_string(),
        path,
        query,
        headers: parts.headers,
        body,
        answer: Bytes::from(answer),
    });
    // Streamed in pieces with pauses, so that a proxy that buffered would be seen.
    let stream = futures_util::stream::unfold(chunks.into_iter(), |mut it| async move {
        let next = it.next()?;
        tokio::time::sleep(Duration::from_millis(5)).await;
        Some((Ok::<_, std::io::Error>(Bytes::from(next)), it))
    });
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap())
        .header("content-type", content_type)
        .header("x-upstream", "scripted")
        .body(Body::from_stream(stream))
        .unwrap()
}

fn sse(events: &[(Option<&str>, Value)]) -> Vec<String> {
    events
        .iter()
        .map(|(event, data)| match event {
            Some(e) => format!("event: {e}\ndata: {data}\n\n"),
            None => format!("data: {data}\n\n"),
        })
        .collect()
}

/// A reply with `text` in the format of `path`: the JSON body, or the SSE events.
fn reply_in_format(path: &str, text: &str, stream: bool) -> (&'static str, Vec<String>) {
    let (half_a, half_b) = text.split_at(text.len() / 2);
    match (path, stream) {
        ("/v1/chat/completions", false) => ("application/json", vec![json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop", "logprobs": null}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}).to_string()]),
        ("/v1/chat/completions", true) => {
            let chunk = |delta: Value, finish: Value| json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": null}]});
            let mut out = sse(&[
                (None, chunk(json!({"role": "assistant", "content": half_a}), Value::Null)),
                (None, chunk(json!({"content": half_b}), Value::Null)),
                (None, chunk(json!({}), json!("stop"))),
            ]);
            out.push("data: [DONE]\n\n".into());
            ("text/event-stream", out)
        }
        ("/v1/messages", false) => ("application/json", vec![json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 2}}).to_string()]),
        ("/v1/messages", true) => ("text/event-stream", sse(&[
            (Some("message_start"), json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 0}}})),
            (Some("content_block_start"), json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
            (Some("content_block_delta"), json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": half_a}})),
            (Some("content_block_delta"), json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": half_b}})),
            (Some("content_block_stop"), json!({"type": "content_block_stop", "index": 0})),
            (Some("message_delta"), json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 2}})),
            (Some("message_stop"), json!({"type": "message_stop"})),
        ])),
        ("/v1/responses", false) => ("application/json", vec![responses_object(text, "completed").to_string()]),
        ("/v1/responses", true) => ("text/event-stream", sse(&[
            (Some("response.created"), json!({"type": "response.created", "sequence_number": 0, "response": responses_object("", "in_progress")})),
            (Some("response.output_text.delta"), json!({"type": "response.output_text.delta", "sequence_number": 1, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": half_a, "logprobs": []})),
            (Some("response.output_text.delta"), json!({"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": half_b, "logprobs": []})),
            (Some("response.completed"), json!({"type": "response.completed", "sequence_number": 3, "response": responses_object(text, "completed")})),
        ])),
        _ => ("application/json", vec![json!({"object": "list", "data": [{"id": "m", "object": "model", "created": 1, "owned_by": "scripted"}]}).to_string()]),
    }
}

fn responses_object(text: &str, status: &str) -> Value {
    let output = if text.is_empty() {
        json!([])
    } else {
        json!([{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}])
    };
    json!({"id": "resp_1", "object": "response", "created_at": 1, "status": status, "model": "m",
           "output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": [],
           "usage": {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12,
                     "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}})
}

/// The method of a Gemini model path (`/v1beta/models/NAME:METHOD`), if it is one.
fn gemini_method(path: &str) -> Option<&str> {
    let (head, method) = path.rsplit_once(':')?;
    (head.contains("/models/")
        && (method == "generateContent" || method == "streamGenerateContent"))
        .then_some(method)
}

/// A Gemini answer with `text`: one `GenerateContentResponse`, or a stream of two, as
/// server-sent events (`alt=sse`) or as the JSON array Google streams without it.
fn gemini_reply(text: &str, stream: bool, sse: bool) -> (&'static str, Vec<String>) {
    let (half_a, half_b) = text.split_at(text.len() / 2);
    let chunk = |t: &str, last: bool| {
        let mut c = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": t}]}, "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12},
            "modelVersion": "m", "responseId": "r1"});
        if last {
            c["candidates"][0]["finishReason"] = json!("STOP");
        }
        c
    };
    if !stream {
        return ("application/json", vec![chunk(text, true).to_string()]);
    }
    let (a, b) = (chunk(half_a, false), chunk(half_b, true));
    if sse {
        (
            "text/event-stream",
            vec![format!("data: {a}\r\n\r\n"), format!("data: {b}\r\n\r\n")],
        )
    } else {
        (
            "application/json",
            vec![format!("[{a}"), format!("\n,\r\n{b}"), "\n]".to_owned()],
        )
    }
}
