//! Gemini on the proxy: which paths are Google's (`generateContent` and
//! `streamGenerateContent` of a model, compacted; every other `/v1beta/...`, `/v1alpha/...`
//! and `/upload/...` path, passed through), which requests carry a Gemini credential
//! (`x-goog-api-key`, `?key=`), and what a Gemini body sends beside `contents`.

use axum::http::HeaderMap;
use serde_json::Value;

/// The header Gemini clients send their API key in.
pub const GEMINI_KEY_HEADER: &str = "x-goog-api-key";

/// The model methods of a Gemini path that the proxy compacts.
const COMPACTED: [&str; 2] = ["generateContent", "streamGenerateContent"];

/// Other model methods of the Gemini API: a `/v1/models/NAME:METHOD` path with one of
/// them is Google's (OpenAI's `/v1/models/ID` takes no method; a fine-tuned OpenAI id
/// such as `ft:gpt-4o-mini:org::abc` has colons, but not one of these after the last).
const OTHER_METHODS: [&str; 8] = [
    "countTokens",
    "embedContent",
    "batchEmbedContents",
    "asyncBatchEmbedContent",
    "batchGenerateContent",
    "predict",
    "predictLongRunning",
    "generateAnswer",
];

/// The version prefixes of the Gemini API.
const VERSIONS: [&str; 3] = ["/v1beta/", "/v1alpha/", "/v1/"];

/// A model path split: the model's name (without `models/`) and its method.
fn model_method(path: &str) -> Option<(&str, &str)> {
    let rest = VERSIONS.iter().find_map(|v| path.strip_prefix(v))?;
    let named = rest
        .strip_prefix("models/")
        .or_else(|| rest.strip_prefix("tunedModels/"))?;
    let (model, method) = named.rsplit_once(':')?;
    let plain = !model.is_empty() && !model.contains('/');
    plain.then_some((model, method.trim_end_matches('/')))
}

/// The model of a Gemini `generateContent` or `streamGenerateContent` path (under
/// `/v1beta/`, `/v1alpha/` or `/v1/`, of `models/` or `tunedModels/`), if it is one.
///
/// ```
/// use favur_context_proxy::gemini::generate_model;
/// assert_eq!(generate_model("/v1beta/models/gemini-2.5-pro:generateContent"), Some("gemini-2.5-pro"));
/// assert_eq!(generate_model("/v1/models/gemini-3-pro-preview:streamGenerateContent"), Some("gemini-3-pro-preview"));
/// assert_eq!(generate_model("/v1beta/models/gemini-2.5-pro:countTokens"), None);
/// assert_eq!(generate_model("/v1/chat/completions"), None);
/// assert_eq!(generate_model("/v1/models/ft:gpt-4o-mini:org::abc"), None);
/// ```
pub fn generate_model(path: &str) -> Option<&str> {
    model_method(path)
        .filter(|(_, method)| COMPACTED.contains(method))
        .map(|(model, _)| model)
}

/// Whether `path` is the Gemini API's and goes to the Gemini upstream whatever it
/// carries: a `/v1beta/`, `/v1alpha/` or `/upload/` path, or a `/v1/` model path with a
/// Gemini method. OpenAI's and Anthropic's `/v1/` paths are not.
///
/// ```
/// use favur_context_proxy::gemini::is_gemini_path;
/// assert!(is_gemini_path("/v1beta/models"));
/// assert!(is_gemini_path("/upload/v1beta/files"));
/// assert!(is_gemini_path("/v1/models/gemini-2.5-flash:countTokens"));
/// assert!(!is_gemini_path("/v1/models"));
/// assert!(!is_gemini_path("/v1/models/ft:gpt-4o-mini:org::abc"));
/// assert!(!is_gemini_path("/v1/chat/completions"));
/// ```
pub fn is_gemini_path(path: &str) -> bool {
    if ["/v1beta/", "/v1alpha/", "/upload/"]
        .iter()
        .any(|p| path.starts_with(p))
    {
        return true;
    }
    model_method(path).is_some_and(|(_, m)| COMPACTED.contains(&m) || OTHER_METHODS.contains(&m))
}

/// Whether a request carries a Gemini credential: the `x-goog-api-key` header or a `key`
/// parameter in its query.
///
/// ```
/// use axum::http::HeaderMap;
/// use favur_context_proxy::gemini::carries_gemini_key;
/// let none = HeaderMap::new();
/// assert!(carries_gemini_key(&none, Some("alt=sse&key=AIza")));
/// assert!(!carries_gemini_key(&none, Some("alt=sse&monkey=1")));
/// let mut h = HeaderMap::new();
/// h.insert("x-goog-api-key", "AIza".parse().unwrap());
/// assert!(carries_gemini_key(&h, None));
/// ```
pub fn carries_gemini_key(headers: &HeaderMap, query: Option<&str>) -> bool {
    headers.contains_key(GEMINI_KEY_HEADER)
        || query.is_some_and(|q| {
            q.split('&')
                .any(|pair| pair.split_once('=').map_or(pair, |(k, _)| k) == "key")
        })
}

/// Whether a Gemini body holds a transcript the proxy compacts: a non-empty `contents`
/// array whose every content names its `role` (a single prompt without roles is passed
/// through as it came).
pub(crate) fn compactable(body: &Value) -> bool {
    body.get("contents")
        .and_then(Value::as_array)
        .is_some_and(|c| {
            !c.is_empty()
                && c.iter()
                    .all(|t| t.get("role").is_some_and(Value::is_string))
        })
}

/// The body with a snake-case `system_instruction` (which the API accepts as well)
/// renamed to `systemInstruction`, the key the library's importer reads and the
/// renderer writes, so that the compacted body never holds both.
pub(crate) fn normalize(body: &mut Value) {
    if let Some(obj) = body.as_object_mut()
        && !obj.contains_key("systemInstruction")
        && let Some(system) = obj.remove("system_instruction")
    {
        obj.insert("systemInstruction".into(), system);
    }
}

/// The text of what a Gemini body sends the model beside `contents` and its system
/// instruction: `tools`, `toolConfig` and the response schema of `generationConfig`
/// (camel or snake case), counted as request overhead. A `cachedContent` is a name
/// here; what it holds is Google's and not counted.
///
/// ```
/// use favur_context_proxy::wire::Wire;
/// use serde_json::json;
/// let body = json!({"contents": [], "generationConfig": {"temperature": 0.2,
///     "responseSchema": {"type": "OBJECT"}}, "tools": [{"functionDeclarations": []}]});
/// assert_eq!(Wire::Gemini.overhead_text(&body), "[{\"functionDeclarations\":[]}]\n{\"type\":\"OBJECT\"}");
/// ```
pub(crate) fn overhead_text(body: &Value) -> String {
    let mut parts = Vec::new();
    let mut push = |v: Option<&Value>| match v {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => parts.push(s.clone()),
        Some(v) => parts.push(v.to_string()),
    };
    for key in ["tools", "toolConfig", "tool_config"] {
        push(body.get(key));
    }
    for config in ["generationConfig", "generation_config"] {
        let Some(config) = body.get(config) else {
            continue;
        };
        for key in [
            "responseSchema",
            "response_schema",
            "responseJsonSchema",
            "response_json_schema",
        ] {
            push(config.get(key));
        }
    }
    parts.join("\n")
}
