//! Conversions to and from the request types of other crates (cargo features).
//!
//! - feature `async-openai`: [`async_openai`](mod@self::async_openai), the chat request
//!   message types of the [async-openai](https://docs.rs/async-openai) crate, built with
//!   `default-features = false, features = ["chat-completion-types"]`, so no HTTP or TLS
//!   stack comes with it; and [`async_openai_responses`], its Responses input items
//!   (`response-types`).
//! - feature `rig`: [`rig`](mod@self::rig), rig-core's completion message types (the
//!   compacted view as a `chat_history`, a completion as a [`Reply`](crate::reply::Reply)).

#[cfg(feature = "rig")]
pub mod rig;

/// Conversions between histories and async-openai's chat request messages.
///
/// ```
/// use async_openai::types::chat::{ChatCompletionRequestMessage, CreateChatCompletionRequestArgs};
/// use favur_context::{fuzzy, strict, History};
/// use favur_context::interop::async_openai::request_messages;
///
/// let mut h = History::new();
/// h.pin(strict!(system: "You are a coding agent."));
/// h.append(strict!(user: "List the files."));
/// h.append(fuzzy!(tool_call: "c1", "bash", serde_json::json!({"command": "ls"})));
/// h.append(fuzzy!(tool_result("c1"): "src"));
/// let messages = request_messages(&h).unwrap();
/// assert!(matches!(messages[3], ChatCompletionRequestMessage::Tool(_)));
/// let request = CreateChatCompletionRequestArgs::default()
///     .model("gpt-4.1")
///     .messages(messages)
///     .build()
///     .unwrap();
/// assert_eq!(request.messages.len(), 4);
/// ```
#[cfg(feature = "async-openai")]
pub mod async_openai {
    use ::async_openai::types::chat::ChatCompletionRequestMessage;

    /// async-openai's chat types, re-exported so users of the feature can name them
    /// without depending on the crate themselves.
    pub use ::async_openai::types::chat as types;

    use crate::history::History;
    use crate::import::{self, Classifier, Format, ImportError, ImportReport, ParseOptions};
    use crate::request::render::render_openai;

    /// A rendered message that async-openai's types cannot hold.
    #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
    #[error("message {index} does not fit async-openai's types: {message}")]
    pub struct InteropError {
        /// Index of the message in the rendered request.
        pub index: usize,
        /// What did not fit.
        pub message: String,
    }

    /// The current view rendered by [`render_openai`] as async-openai request messages,
    /// with the same guarantees (pairing, order, determinism). Extensions without a
    /// field in async-openai's types are left out.
    ///
    /// ```
    /// use favur_context::{strict, History};
    /// let mut h = History::new();
    /// h.append(strict!(user: "hi"));
    /// assert_eq!(favur_context::interop::async_openai::request_messages(&h).unwrap().len(), 1);
    /// ```
    pub fn request_messages(
        history: &History,
    ) -> Result<Vec<ChatCompletionRequestMessage>, InteropError> {
        let rendered = render_openai(history);
        let list = rendered.as_array().map(Vec::as_slice).unwrap_or_default();
        list.iter()
            .enumerate()
            .map(|(index, m)| {
                serde_json::from_value(m.clone()).map_err(|e| InteropError {
                    index,
                    message: e.to_string(),
                })
            })
            .collect()
    }

    /// Imports async-openai request messages into `history`. A class is required for
    /// every message, so this takes a classifier like every import; all or nothing.
    ///
    /// ```
    /// use async_openai::types::chat::{ChatCompletionRequestMessage, ChatCompletionRequestUserMessage};
    /// use favur_context::{History, Retention};
    /// use favur_context::import::IncomingMessage;
    /// let messages = vec![ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage::from("hi"))];
    /// let mut h = History::new();
    /// favur_context::interop::async_openai::import_messages(&mut h, &messages, &|_: &IncomingMessage<'_>| Retention::Strict).unwrap();
    /// assert_eq!(h.entries()[0].message().text(), "hi");
    /// ```
    pub fn import_messages<C: Classifier + ?Sized>(
        history: &mut History,
        messages: &[ChatCompletionRequestMessage],
        classifier: &C,
    ) -> Result<ImportReport, ImportError> {
        let value =
            serde_json::to_value(messages).map_err(|e| ImportError::Shape(e.to_string()))?;
        import::parse_value(Format::OpenAi, &value, ParseOptions::default())?
            .import_into(history, classifier)
    }
}

/// Conversions between histories and async-openai's Responses input items (feature
/// `async-openai`, with async-openai's `response-types`).
///
/// ```
/// use async_openai::types::responses::{CreateResponseArgs, InputItem, InputParam};
/// use favur_context::message::{Part, Reasoning};
/// use favur_context::{History, Message, Retention, Role, ToolCall};
/// use favur_context::interop::async_openai_responses::input_items;
///
/// let mut h = History::new();
/// h.append(Message::user("list the files").classify(Retention::Strict));
/// h.append(Message::new(Role::Assistant, vec![
///     Part::from(Reasoning::openai("rs_1", ["listing"], Some("ENC".into()))),
///     Part::from(ToolCall::new("call_1", "ls", "{}").with_provider_id("fc_1")),
/// ]).classify(Retention::Fuzzy));
/// h.append(Message::tool_result("call_1", "a.rs", false).classify(Retention::Fuzzy));
/// let items = input_items(&h).unwrap();
/// assert_eq!(items.len(), 4);
/// let request = CreateResponseArgs::default()
///     .model("o4-mini")
///     .input(InputParam::Items(items))
///     .store(false)
///     .build()
///     .unwrap();
/// assert!(matches!(request.input, InputParam::Items(ref i) if i.len() == 4));
/// ```
#[cfg(feature = "async-openai")]
pub mod async_openai_responses {
    use ::async_openai::types::responses::InputItem;
    use serde_json::Value;

    /// async-openai's Responses types, re-exported.
    pub use ::async_openai::types::responses as types;

    pub use super::async_openai::InteropError;
    use crate::history::History;
    use crate::import::{self, Classifier, Format, ImportError, ImportReport, ParseOptions};
    use crate::request::render::render_responses;

    /// The current view rendered by [`render_responses`] as async-openai input items
    /// (the `input` of a `CreateResponse`), with the same guarantees.
    ///
    /// ```
    /// use favur_context::{strict, History};
    /// let mut h = History::new();
    /// h.append(strict!(user: "hi"));
    /// assert_eq!(favur_context::interop::async_openai_responses::input_items(&h).unwrap().len(), 1);
    /// ```
    pub fn input_items(history: &History) -> Result<Vec<InputItem>, InteropError> {
        let mut body = render_responses(history);
        let items = match body.get_mut("input") {
            Some(Value::Array(items)) => std::mem::take(items),
            _ => Vec::new(),
        };
        items
            .into_iter()
            .enumerate()
            .map(|(index, item)| {
                serde_json::from_value(item).map_err(|e| InteropError {
                    index,
                    message: e.to_string(),
                })
            })
            .collect()
    }

    /// Imports async-openai input items into `history`, as [`Format::Responses`]
    /// transcripts are imported: a classifier is required, all or nothing.
    ///
    /// ```
    /// use async_openai::types::responses::{EasyInputMessage, InputItem};
    /// use favur_context::{History, Retention};
    /// use favur_context::import::IncomingMessage;
    /// let items = vec![InputItem::EasyMessage(EasyInputMessage { content: "hi".into(), ..Default::default() })];
    /// let mut h = History::new();
    /// favur_context::interop::async_openai_responses::import_items(&mut h, &items, &|_: &IncomingMessage<'_>| Retention::Strict).unwrap();
    /// assert_eq!(h.entries()[0].message().text(), "hi");
    /// ```
    pub fn import_items<C: Classifier + ?Sized>(
        history: &mut History,
        items: &[InputItem],
        classifier: &C,
    ) -> Result<ImportReport, ImportError> {
        let value = serde_json::to_value(items).map_err(|e| ImportError::Shape(e.to_string()))?;
        import::parse_value(Format::Responses, &value, ParseOptions::default())?
            .import_into(history, classifier)
    }
}
