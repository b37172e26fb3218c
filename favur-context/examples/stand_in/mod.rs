//! A stand-in model server on 127.0.0.1: real HTTP/1.1 over TCP, answering each request
//! with what a handler returns for it. Used by the `agent` example and by the LLM tests
//! (which include this file with `#[path]`).
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server answers one request with.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A status and a JSON (or any) body.
    Status(u16, String),
    /// Reads the request and never answers (a model that hangs).
    Hang,
}

impl Answer {
    /// 200 with an OpenAI chat completion whose content is `text`.
    pub fn completion(text: &str) -> Answer {
        Answer::reply(
            serde_json::json!({"role": "assistant", "content": text}),
            "stop",
        )
    }

    /// 200 with an OpenAI chat completion asking for one tool call.
    pub fn tool_call(id: &str, name: &str, arguments: serde_json::Value) -> Answer {
        let call = serde_json::json!({"id": id, "type": "function",
            "function": {"name": name, "arguments": arguments.to_string()}});
        Answer::reply(
            serde_json::json!({"role": "assistant", "content": null, "tool_calls": [call]}),
            "tool_calls",
        )
    }

    fn reply(message: serde_json::Value, finish: &str) -> Answer {
        let body = serde_json::json!({
            "id": "chatcmpl-standin", "object": "chat.completion", "model": "stand-in",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        });
        Answer::Status(200, body.to_string())
    }
}

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("the request body is JSON")
    }
}

pub struct StandIn {
    /// `http://127.0.0.1:<port>/v1`
    pub base_url: String,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl StandIn {
    /// Starts the server on a free port of 127.0.0.1, answering the scripted answers in
    /// order; when they run out, 500s.
    pub async fn start(answers: Vec<Answer>) -> StandIn {
        let answers = Mutex::new(answers.into_iter());
        StandIn::with_handler(move |_| answers.lock().unwrap().next()).await
    }

    /// Starts the server on a free port of 127.0.0.1, answering each request with what
    /// `handler` returns for it (`None`: a 500).
    pub async fn with_handler(
        handler: impl Fn(&Request) -> Option<Answer> + Send + Sync + 'static,
    ) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Handler = Arc::new(handler);
        let seen = Arc::clone(&requests);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let seen = Arc::clone(&seen);
                let handler = Arc::clone(&handler);
                tokio::spawn(serve(stream, seen, handler));
            }
        });
        StandIn {
            base_url: format!("http://{addr}/v1"),
            requests,
        }
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

type Handler = Arc<dyn Fn(&Request) -> Option<Answer> + Send + Sync>;

async fn serve(mut stream: TcpStream, seen: Arc<Mutex<Vec<Request>>>, handler: Handler) {
    // Keep-alive: answer requests on this connection until it closes.
    while let Some(request) = read_request(&mut stream).await {
        let answer = handler(&request);
        seen.lock().unwrap().push(request);
        let (status, body) = match answer {
            Some(Answer::Status(s, b)) => (s, b),
            Some(Answer::Hang) => {
                // Hold the connection open without answering until the client gives up.
                let mut sink = [0u8; 64];
                while stream.read(&mut sink).await.is_ok_and(|n| n > 0) {}
                return;
            }
            None => (
                500,
                r#"{"error":{"message":"no more scripted answers"}}"#.to_owned(),
            ),
        };
        let head = format!(
            "HTTP/1.1 {status} Stand-in\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        if stream.write_all(head.as_bytes()).await.is_err()
            || stream.write_all(body.as_bytes()).await.is_err()
        {
            return;
        }
    }
}

async fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Request {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}
