//! The messages of a document, one by one: each format's reader, fed from a parsed
//! document or from a stream, hands every message it reads to a sink.

use std::borrow::Borrow;

use serde_json::Value;

use super::{
    Format, ImportError, ParseOptions, TranscriptMessage, anthropic, gemini, mini_swe, openai,
    responses,
};

/// Takes each message a format's reader reads.
pub(crate) type Sink<'a> = dyn FnMut(TranscriptMessage) -> Result<(), ImportError> + 'a;

/// Reads the messages of `list` as `format` (with the document's [`system_key`] value),
/// handing each to `sink`; returns the exit record (mini-swe-agent).
pub(crate) fn read_each<M: Borrow<Value>>(
    format: Format,
    system: Option<&Value>,
    list: impl Iterator<Item = Result<M, ImportError>>,
    options: ParseOptions,
    sink: &mut Sink<'_>,
) -> Result<Option<String>, ImportError> {
    match format {
        Format::OpenAi => openai::parse_each(list, options, sink),
        Format::Anthropic => anthropic::parse_each(system, list, sink),
        Format::MiniSweAgent => mini_swe::parse_each(list, options, sink),
        Format::Gemini => gemini::parse_each(system, list, sink),
        Format::Responses => {
            // Items are paired across the list (a turn's reasoning, calls and text make
            // one message): read as a whole list.
            let items = list
                .map(|m| m.map(|m| m.borrow().clone()))
                .collect::<Result<Vec<Value>, _>>()?;
            let transcript = responses::parse(&Value::Array(items), options)?;
            transcript.messages.into_iter().try_for_each(sink)?;
            Ok(None)
        }
    }
}

/// How a shape error names a format's documents.
pub(crate) fn document_name(format: Format) -> &'static str {
    match format {
        Format::OpenAi => "OpenAI chat messages",
        Format::Anthropic => "Anthropic messages",
        Format::MiniSweAgent => "a mini-swe-agent trajectory",
        Format::Gemini => "Gemini contents",
        Format::Responses => "OpenAI Responses items",
    }
}

/// The key of a document object that holds its messages (`messages`; Gemini: `contents`).
pub(crate) fn list_key(format: Format) -> &'static str {
    match format {
        Format::Gemini => "contents",
        Format::Responses => "input",
        _ => "messages",
    }
}

/// The key of a document object that holds its system prompt, read apart from the
/// messages (Anthropic: `system`; Gemini: `systemInstruction`).
pub(crate) fn system_key(format: Format) -> Option<&'static str> {
    match format {
        Format::Anthropic => Some("system"),
        Format::Gemini => Some("systemInstruction"),
        _ => None,
    }
}
