//! The request formats the proxy compacts: which path carries which, where the
//! transcript sits in the body, how the compacted view goes back in its place, and how
//! the result is checked before it is sent.

use favur_context::History;
use favur_context::import::Format;
use favur_context::render::validate::{
    ValidationError, validate_anthropic_strict, validate_gemini_strict, validate_openai_strict,
    validate_responses_strict,
};
use favur_context::render::{
    GeminiOptions, render_anthropic, render_gemini_with, render_openai, render_responses,
};
use serde_json::Value;

/// A request format the proxy compacts. Every other path is passed through untouched.
///
/// ```
/// use favur_context_proxy::wire::Wire;
/// assert_eq!(Wire::from_path("/v1/chat/completions"), Some(Wire::Chat));
/// // Gemini's OpenAI-compatible endpoint: Chat Completions, sent to the Gemini upstream.
/// assert_eq!(Wire::from_path("/v1beta/openai/chat/completions"), Some(Wire::Chat));
/// assert_eq!(Wire::from_path("/v1/messages"), Some(Wire::Anthropic));
/// assert_eq!(Wire::from_path("/v1/responses"), Some(Wire::Responses));
/// assert_eq!(Wire::from_path("/v1/messages/count_tokens"), None);
/// assert_eq!(Wire::from_path("/v1beta/models/gemini-2.5-pro:streamGenerateContent"), Some(Wire::Gemini));
/// assert_eq!(Wire::from_path("/v1/models/gemini-2.5-pro:generateContent"), Some(Wire::Gemini));
/// assert_eq!(Wire::from_path("/v1/models"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Wire {
    /// OpenAI Chat Completions: `messages` (also on Gemini's OpenAI-compatible
    /// `/v1beta/openai/chat/completions`, which goes to the Gemini upstream).
    Chat,
    /// Anthropic Messages: `system` and `messages`.
    Anthropic,
    /// OpenAI Responses: `input` (client-held state only; `previous_response_id` is
    /// passed through, the provider holds that history).
    Responses,
    /// Gemini `generateContent` and `streamGenerateContent`: `systemInstruction` and
    /// `contents`, the model named by the path
    /// ([`generate_model`](crate::gemini::generate_model)).
    Gemini,
}

impl Wire {
    /// The format a request on `path` carries, if the proxy compacts it.
    ///
    /// See [`Wire`] for an example.
    pub fn from_path(path: &str) -> Option<Wire> {
        match path.trim_end_matches('/') {
            "/v1/chat/completions" | "/chat/completions" | "/v1beta/openai/chat/completions" => {
                Some(Wire::Chat)
            }
            "/v1/messages" | "/messages" => Some(Wire::Anthropic),
            "/v1/responses" | "/responses" => Some(Wire::Responses),
            p if crate::gemini::generate_model(p).is_some() => Some(Wire::Gemini),
            _ => None,
        }
    }

    /// The name used in logs and the sessions endpoint.
    pub fn name(self) -> &'static str {
        match self {
            Wire::Chat => "chat",
            Wire::Anthropic => "anthropic",
            Wire::Responses => "responses",
            Wire::Gemini => "gemini",
        }
    }

    /// The transcript format the library imports a body of this format as. A Chat body
    /// without `tools` whose assistant turns hold a fenced bash block is a plain-chat
    /// shell agent (mini-swe-agent and the like: the command in the assistant text, its
    /// output in the next user message), imported as such so that outputs are
    /// classified by the command that produced them.
    ///
    /// ```
    /// use favur_context::import::Format;
    /// use favur_context_proxy::wire::Wire;
    /// use serde_json::json;
    /// let plain = json!({"messages": [{"role": "user", "content": "fix it"},
    ///     {"role": "assistant", "content": "THOUGHT: look\n```bash\nls\n```"},
    ///     {"role": "user", "content": "<output>a.py</output>"}]});
    /// assert_eq!(Wire::Chat.format(&plain), Format::MiniSweAgent);
    /// let chat = json!({"messages": [{"role": "user", "content": "hi"}]});
    /// assert_eq!(Wire::Chat.format(&chat), Format::OpenAi);
    /// ```
    pub fn format(self, body: &Value) -> Format {
        match self {
            Wire::Chat if plain_chat_shell(body) => Format::MiniSweAgent,
            Wire::Chat => Format::OpenAi,
            Wire::Anthropic => Format::Anthropic,
            Wire::Responses => Format::Responses,
            Wire::Gemini => Format::Gemini,
        }
    }

    /// The format a session's fingerprint is taken in: one per wire format, so that a
    /// plain-chat session keeps its key when its first request (no assistant turn yet)
    /// is read as plain Chat.
    pub(crate) fn format_family(self) -> Format {
        match self {
            Wire::Chat => Format::OpenAi,
            Wire::Anthropic => Format::Anthropic,
            Wire::Responses => Format::Responses,
            Wire::Gemini => Format::Gemini,
        }
    }

    /// Whether a body of this format holds a transcript the proxy can compact: an object
    /// with its list, and for Responses no server-held state (`previous_response_id`)
    /// and a list rather than one input string; for Gemini a non-empty `contents` whose
    /// every content names its role.
    ///
    /// ```
    /// use favur_context_proxy::wire::Wire;
    /// use serde_json::json;
    /// assert!(Wire::Chat.compactable(&json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]})));
    /// assert!(!Wire::Responses.compactable(&json!({"input": "hi"})));
    /// assert!(!Wire::Responses.compactable(&json!({"input": [], "previous_response_id": "resp_1"})));
    /// assert!(Wire::Gemini.compactable(&json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})));
    /// assert!(!Wire::Gemini.compactable(&json!({"contents": [{"parts": [{"text": "hi"}]}]})));
    /// ```
    pub fn compactable(self, body: &Value) -> bool {
        let list = match self {
            Wire::Chat | Wire::Anthropic => "messages",
            Wire::Responses => "input",
            Wire::Gemini => return crate::gemini::compactable(body),
        };
        let stateful = body
            .get("previous_response_id")
            .is_some_and(|v| !v.is_null());
        body.get(list).is_some_and(Value::is_array) && !stateful
    }

    /// The text of the fields sent with every request besides the transcript (tool
    /// definitions, Responses `instructions`, a response schema; for Gemini `tools`,
    /// `toolConfig` and the schema of `generationConfig`): counted as request overhead so
    /// the budget covers the whole request. Empty when there are none.
    ///
    /// ```
    /// use favur_context_proxy::wire::Wire;
    /// use serde_json::json;
    /// assert_eq!(Wire::Chat.overhead_text(&json!({"model": "m", "messages": []})), "");
    /// let body = json!({"instructions": "be brief", "tools": [{"name": "ls", "type": "function"}]});
    /// assert_eq!(Wire::Responses.overhead_text(&body), "[{\"name\":\"ls\",\"type\":\"function\"}]\nbe brief");
    /// ```
    pub fn overhead_text(self, body: &Value) -> String {
        if self == Wire::Gemini {
            return crate::gemini::overhead_text(body);
        }
        let mut parts = Vec::new();
        for key in [
            "tools",
            "tool_choice",
            "response_format",
            "text",
            "instructions",
        ] {
            match body.get(key) {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) => parts.push(s.clone()),
                Some(v) => parts.push(v.to_string()),
            }
        }
        parts.join("\n")
    }

    /// The client's body with its transcript replaced by `history`'s view, rendered in
    /// this format (Gemini with `gemini`, the options of the path's model); every other
    /// field is the client's.
    pub(crate) fn splice(self, body: &Value, history: &History, gemini: &GeminiOptions) -> Value {
        let mut out = body.as_object().cloned().unwrap_or_default();
        match self {
            Wire::Chat => {
                out.insert("messages".into(), render_openai(history));
            }
            Wire::Anthropic => {
                let rendered = render_anthropic(history);
                if rendered.system.is_empty() {
                    out.remove("system");
                } else {
                    out.insert("system".into(), Value::Array(rendered.system));
                }
                out.insert("messages".into(), Value::Array(rendered.messages));
            }
            Wire::Responses => {
                let mut rendered = render_responses(history);
                let input = rendered
                    .get_mut("input")
                    .map(Value::take)
                    .unwrap_or_else(|| Value::Array(Vec::new()));
                out.insert("input".into(), input);
            }
            Wire::Gemini => {
                let mut rendered = render_gemini_with(history, gemini);
                out.remove("system_instruction");
                match rendered.get_mut("systemInstruction").map(Value::take) {
                    Some(system) => out.insert("systemInstruction".into(), system),
                    None => out.remove("systemInstruction"),
                };
                let contents = rendered
                    .get_mut("contents")
                    .map(Value::take)
                    .unwrap_or_else(|| Value::Array(Vec::new()));
                out.insert("contents".into(), contents);
            }
        }
        Value::Object(out)
    }

    /// Checks a body about to be sent with the library's strict validator for the format.
    pub(crate) fn validate(self, body: &Value) -> Result<(), ValidationError> {
        match self {
            Wire::Chat => validate_openai_strict(body),
            Wire::Anthropic => validate_anthropic_strict(body),
            Wire::Responses => validate_responses_strict(body),
            Wire::Gemini => validate_gemini_strict(body),
        }
    }
}

/// Whether a Chat body is a plain-chat shell agent's (see [`Wire::format`]).
fn plain_chat_shell(body: &Value) -> bool {
    if body.get("tools").is_some_and(|t| !t.is_null()) {
        return false;
    }
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return false;
    };
    messages.iter().any(|m| {
        m.get("role").and_then(Value::as_str) == Some("assistant")
            && m.get("content")
                .and_then(Value::as_str)
                .is_some_and(|t| t.contains("```bash"))
    })
}
