//! Replies in: provider response bodies and streams, in the providers' documented shapes.

use favur_context::message::Arguments;
use favur_context::reply::{Reply, ReplyError, ReplyStream, StopReason, Usage};
use favur_context::{History, Message, Retention, Role, fuzzy, strict};

const OPENAI_TOOL_CALLS: &str = r#"{
  "id": "chatcmpl-abc123",
  "object": "chat.completion",
  "created": 1741569952,
  "model": "gpt-4.1-2025-04-14",
  "choices": [{
    "index": 0,
    "message": {
      "role": "assistant",
      "content": null,
      "tool_calls": [
        {"id": "call_abc", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"src/parse.rs\"}"}},
        {"id": "call_def", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"cargo test\"}"}}
      ],
      "refusal": null,
      "annotations": []
    },
    "logprobs": null,
    "finish_reason": "tool_calls"
  }],
  "usage": {"prompt_tokens": 343, "completion_tokens": 41, "total_tokens": 384,
            "prompt_tokens_details": {"cached_tokens": 0}},
  "service_tier": "default"
}"#;

/// The calls of a reply that stopped for tool calls, checked: its usage (input, output)
/// and how many calls it made.
fn tool_calls_of(
    reply: &Reply,
    (input, output): (u64, u64),
    calls: usize,
) -> Vec<favur_context::ToolCall> {
    assert_eq!(reply.stop_reason(), &StopReason::ToolCalls);
    assert_eq!(
        reply.usage(),
        Some(Usage {
            input_tokens: input,
            output_tokens: output
        })
    );
    let found = reply.tool_calls();
    assert_eq!(found.len(), calls);
    found
}

#[test]
fn openai_tool_calls_are_parsed_in_order() {
    let reply = Reply::from_openai(OPENAI_TOOL_CALLS).unwrap();
    assert_eq!(reply.model(), Some("gpt-4.1-2025-04-14"));
    let calls = tool_calls_of(&reply, (343, 41), 2);
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("call_abc", "read_file")
    );
    assert_eq!(
        calls[0].arguments.as_json().unwrap()["path"],
        "src/parse.rs"
    );
    assert_eq!(
        calls[1].arguments.as_json().unwrap()["command"],
        "cargo test"
    );
    assert_eq!(reply.text(), "");
    let mut h = History::new();
    let id = h.append(fuzzy!(message: reply));
    let entry = h.recall(id).unwrap();
    assert_eq!(entry.retention(), Retention::Fuzzy);
    assert_eq!(entry.message().role, Role::Assistant);
    assert_eq!(entry.message().tool_calls().count(), 2);
}

#[test]
fn openai_text_reply_and_invalid_arguments_kept_raw() {
    let body = r#"{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\": \"ls"}}]},"finish_reason":"tool_calls"}]}"#;
    let reply = Reply::from_openai(body).unwrap();
    assert_eq!(reply.text(), "Let me look.");
    assert_eq!(
        reply.tool_calls()[0].arguments,
        Arguments::Invalid("{\"command\": \"ls".into())
    );
    let m = Message::from(reply);
    assert_eq!(m.parts.len(), 2, "text first, then the call");
}

#[test]
fn openai_refusal_and_empty_content() {
    let refusal = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I'm sorry, I can't assist with that."},"finish_reason":"stop"}]}"#;
    let reply = Reply::from_openai(refusal).unwrap();
    assert_eq!(
        reply.refusal(),
        Some("I'm sorry, I can't assist with that.")
    );
    assert_eq!(reply.text(), "I'm sorry, I can't assist with that.");
    let empty = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"content_filter"}]}"#;
    let reply = Reply::from_openai(empty).unwrap();
    assert_eq!(reply.stop_reason(), &StopReason::Refused);
    assert!(reply.message().parts.is_empty());
    assert!(reply.tool_calls().is_empty());
}

#[test]
fn openai_malformed_replies_name_the_field() {
    let cases = [
        (
            "[]",
            "malformed reply at the body: expected an object, found an array",
        ),
        ("{}", "malformed reply at choices: missing"),
        (
            r#"{"choices":[]}"#,
            "malformed reply at choices: no choices",
        ),
        (
            r#"{"choices":[{"index":0}]}"#,
            "malformed reply at choices[0].message: missing",
        ),
        (
            r#"{"choices":[{"message":{"content":7}}]}"#,
            "malformed reply at choices[0].message.content: expected a string, an array or null, found a number",
        ),
        (
            r#"{"choices":[{"message":{"tool_calls":{}}}]}"#,
            "malformed reply at choices[0].message.tool_calls: expected an array, found an object",
        ),
        (
            r#"{"choices":[{"message":{"tool_calls":[{"id":"a","type":"function","function":{"name":"x","arguments":"{}"}},{"id":"b","type":"function","function":{"arguments":"{}"}}]}}]}"#,
            "malformed reply at choices[0].message.tool_calls[1].function.name: missing",
        ),
        (
            r#"{"choices":[{"message":{"tool_calls":[{"id":"a","type":"custom","custom":{}}]}}]}"#,
            "malformed reply at choices[0].message.tool_calls[0].type: unsupported tool call type \"custom\" (expected \"function\")",
        ),
        (
            r#"{"choices":[{"message":{"tool_calls":[{"id":5,"type":"function","function":{"name":"x"}}]}}]}"#,
            "malformed reply at choices[0].message.tool_calls[0].id: expected a string, found a number",
        ),
    ];
    for (body, expected) in cases {
        let err = Reply::from_openai(body).unwrap_err();
        assert_eq!(err.to_string(), expected, "{body}");
    }
    assert!(matches!(
        Reply::from_openai("not json"),
        Err(ReplyError::Json(_))
    ));
    let api = Reply::from_openai(r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#).unwrap_err();
    assert_eq!(
        api,
        ReplyError::Api {
            kind: Some("invalid_request_error".into()),
            message: "Incorrect API key provided".into()
        }
    );
}

const ANTHROPIC_TOOL_USE: &str = r#"{
  "id": "msg_01Aq9w938a90dw8q",
  "type": "message",
  "role": "assistant",
  "model": "claude-sonnet-4-5-20250929",
  "content": [
    {"type": "thinking", "thinking": "The user wants the weather.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
    {"type": "text", "text": "I'll check the test first."},
    {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "bash", "input": {"command": "cargo test"}},
    {"type": "tool_use", "id": "toolu_02B", "name": "read_file", "input": {"path": "src/lib.rs"}}
  ],
  "stop_reason": "tool_use",
  "stop_sequence": null,
  "usage": {"input_tokens": 2095, "output_tokens": 503, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 0}
}"#;

#[test]
fn anthropic_tool_use() {
    let reply = Reply::from_anthropic(ANTHROPIC_TOOL_USE).unwrap();
    assert_eq!(reply.text(), "I'll check the test first.");
    let calls = tool_calls_of(&reply, (2195, 503), 2);
    assert_eq!(calls[0].id, "toolu_01A09q90qw90lq917835lq9");
    assert_eq!(calls[1].arguments.as_json().unwrap()["path"], "src/lib.rs");
    let mut h = History::new();
    h.append(strict!(message: reply));
    assert_eq!(h.entries()[0].message().tool_calls().count(), 2);
}

#[test]
fn anthropic_malformed_and_errors() {
    let cases = [
        (
            r#"{"type":"message"}"#,
            "malformed reply at content: missing",
        ),
        (
            r#"{"content":[{"text":"x"}]}"#,
            "malformed reply at content[0].type: missing",
        ),
        (
            r#"{"content":[{"type":"text","text":"a"},{"type":"text"}]}"#,
            "malformed reply at content[1].text: missing",
        ),
        (
            r#"{"content":[{"type":"tool_use","id":"t","name":"bash","input":"ls"}]}"#,
            "malformed reply at content[0].input: expected an object, found a string",
        ),
    ];
    for (body, expected) in cases {
        assert_eq!(
            Reply::from_anthropic(body).unwrap_err().to_string(),
            expected,
            "{body}"
        );
    }
    let err = Reply::from_anthropic(
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the provider answered with an error (overloaded_error): Overloaded"
    );
    let refused =
        Reply::from_anthropic(r#"{"type":"message","content":[],"stop_reason":"refusal"}"#)
            .unwrap();
    assert_eq!(refused.stop_reason(), &StopReason::Refused);
}

/// An OpenAI stream in the documented chunk shape, two parallel tool calls.
const OPENAI_STREAM: &str = concat!(
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Run\"},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ning.\"},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"comm\"}}]},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"a.rs\\\"}\"}}]},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"and\\\":\\\"ls\\\"}\"}}]},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[],\"usage\":{\"prompt_tokens\":90,\"completion_tokens\":30,\"total_tokens\":120}}\n\n",
    "data: [DONE]\n\n",
);

#[test]
fn openai_stream_assembles_whatever_the_chunk_boundaries() {
    let whole = {
        let mut s = ReplyStream::openai();
        s.feed(OPENAI_STREAM.as_bytes()).unwrap();
        s.finish().unwrap()
    };
    assert_eq!(whole.text(), "Running.");
    let calls = tool_calls_of(&whole, (90, 30), 2);
    assert_eq!(calls[0].arguments.as_json().unwrap()["command"], "ls");
    assert_eq!(calls[1].name, "read_file");
    // Every split point, with CRLF line ends too.
    let crlf = OPENAI_STREAM.replace('\n', "\r\n");
    for body in [OPENAI_STREAM.to_owned(), crlf] {
        let bytes = body.as_bytes();
        for cut in (0..bytes.len()).step_by(7) {
            let mut s = ReplyStream::openai();
            s.feed(&bytes[..cut]).unwrap();
            s.feed(&bytes[cut..]).unwrap();
            assert_eq!(s.finish().unwrap(), whole, "split at {cut}");
        }
    }
}

/// The error `s` gives for the event `refused`, pushed after the event `first` (taken).
fn refused_after(s: &mut ReplyStream, first: &str, refused: &str) -> String {
    s.push_data(first).unwrap();
    s.push_data(refused).unwrap_err().to_string()
}

#[test]
fn openai_stream_errors_name_the_event() {
    let mut s = ReplyStream::openai();
    assert_eq!(
        refused_after(
            &mut s,
            r#"{"choices":[{"index":0,"delta":{"content":"a"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"x"}}]}}]}"#,
        ),
        "stream event 1: choices[0].delta.tool_calls[0].index: missing or not an integer"
    );
    let mut s = ReplyStream::openai();
    s.push_data(r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"bash","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#).unwrap();
    assert_eq!(
        s.finish().unwrap_err().to_string(),
        "incomplete stream: tool call 0 never got an id"
    );
    let mut s = ReplyStream::openai();
    let err = s
        .feed(
            b"data: {\"error\":{\"message\":\"server overloaded\",\"type\":\"server_error\"}}\n\n",
        )
        .unwrap_err();
    assert!(matches!(err, ReplyError::Api { .. }));
}

/// The text of an OpenAI stream has a slot of its own: no tool-call index, not even the
/// largest, lands in it.
#[test]
fn openai_stream_text_is_apart_from_every_call_index() {
    let mut s = ReplyStream::openai();
    s.push_data(r#"{"choices":[{"index":0,"delta":{"content":"Running."}}]}"#)
        .unwrap();
    s.push_data(r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":18446744073709551615,"id":"call_9","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},"finish_reason":"tool_calls"}]}"#)
        .unwrap();
    let reply = s.finish().unwrap();
    assert_eq!(reply.text(), "Running.");
    assert_eq!(reply.tool_calls()[0].id, "call_9");
    assert_eq!(
        reply.tool_calls()[0].arguments.as_json().unwrap()["command"],
        "ls"
    );
}

/// An Anthropic stream in the documented event shape.
const ANTHROPIC_STREAM: &str = concat!(
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"usage\":{\"input_tokens\":472,\"output_tokens\":2}}}\n\n",
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    "event: ping\ndata: {\"type\": \"ping\"}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Okay, let me check\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01T1x1fJ34qAmk2tNTrN7Up6\",\"name\":\"get_weather\",\"input\":{}}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"location\\\": \\\"San Fra\"}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"ncisco, CA\\\"}\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":89}}\n\n",
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
);

#[test]
fn anthropic_stream_assembles_text_and_input_json() {
    let mut s = ReplyStream::anthropic();
    for chunk in ANTHROPIC_STREAM.as_bytes().chunks(13) {
        s.feed(chunk).unwrap();
    }
    assert_eq!(s.text(), "Okay, let me check");
    let reply = s.finish().unwrap();
    assert_eq!(reply.model(), Some("claude-sonnet-4-5"));
    let calls = tool_calls_of(&reply, (472, 89), 1);
    assert_eq!(calls[0].name, "get_weather");
    assert_eq!(
        calls[0].arguments.as_json().unwrap()["location"],
        "San Francisco, CA"
    );
}

#[test]
fn anthropic_stream_errors_name_event_and_block() {
    let mut s = ReplyStream::anthropic();
    assert_eq!(
        refused_after(
            &mut s,
            r#"{"type":"message_start","message":{"usage":{"input_tokens":1}}}"#,
            r#"{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}"#,
        ),
        "stream event 1: delta for content block 3, which was never started"
    );
    s.push_data(
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    )
    .unwrap();
    let err = s.push_data(r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}"#).unwrap_err();
    assert_eq!(
        err.to_string(),
        "stream event 3: content block 0: a input_json_delta does not fit this block's type"
    );
    let err = s.push_data(r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","name":"x","input":{}}}"#).unwrap_err();
    assert_eq!(
        err.to_string(),
        "stream event 4: malformed reply at content block 1.id: missing"
    );
    // Cut off before message_stop.
    assert!(matches!(s.finish(), Err(ReplyError::Incomplete(_))));
    let mut s = ReplyStream::anthropic();
    let err = s.feed(b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n").unwrap_err();
    assert_eq!(
        err,
        ReplyError::Api {
            kind: Some("overloaded_error".into()),
            message: "Overloaded".into()
        }
    );
}
