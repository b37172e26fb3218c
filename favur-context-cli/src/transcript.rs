//! Transcripts: imported with the library's import (every format it reads) and classified
//! with a rules file.

use std::path::{Path, PathBuf};

use favur_context::import::rules::{MessageFacts, RuleRef, Rules, Unmatched, UnmatchedMessage};
use favur_context::import::{self, Format, ImportError, ImportedMessage, ParseOptions};
use favur_context::{Message, Retention, Role, ToolCall};
use serde_json::Value;

/// A transcript whose every message has a class and the rule that gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassifiedTranscript {
    /// Its id (the `instance_id` it names, or the file name without extension).
    pub id: String,
    /// Its messages, classified, in order (as the import returns them).
    pub messages: Vec<ImportedMessage>,
    /// Whether each message is a tool result or an environment observation.
    pub results: Vec<bool>,
    /// The class and rule of each message.
    pub decisions: Vec<Decided>,
    /// For each result or observation, the call it answers (tool and arguments; for a
    /// plain-chat agent, the command parsed from its text), if known.
    pub answers: Vec<Option<ToolCall>>,
}

/// A classifier from a closure that may decline (the decisions already made).
struct ByIndex<'f, F>(&'f F);

impl<F> favur_context::import::Classifier for ByIndex<'_, F>
where
    F: Fn(
        &favur_context::import::IncomingMessage<'_>,
    ) -> Result<favur_context::import::Decision, favur_context::import::Unclassified>,
{
    fn classify(
        &self,
        message: &favur_context::import::IncomingMessage<'_>,
    ) -> Result<favur_context::import::Decision, favur_context::import::Unclassified> {
        (self.0)(message)
    }
}

impl Decided {
    fn classifier<F>(f: &F) -> ByIndex<'_, F> {
        ByIndex(f)
    }
}

/// The class a message got and the rule of the rules file that gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decided {
    /// The class given.
    pub class: Retention,
    /// The rule that gave it.
    pub rule: RuleRef,
    /// Whether the rule pins the message.
    pub pin: bool,
}

impl ClassifiedTranscript {
    /// Parses `value` as `format` with the library's import and classifies every message
    /// with `rules`.
    pub fn from_value(
        id: &str,
        format: Format,
        value: &Value,
        rules: &Rules,
    ) -> Result<Self, TranscriptError> {
        let parsed = import::parse_value(
            format,
            value,
            ParseOptions {
                keep_invalid_arguments: true,
            },
        )
        .map_err(|source| TranscriptError::Import {
            transcript: id.to_owned(),
            source,
        })?;
        let Decisions {
            decisions,
            by_index,
            results,
            answers,
            unmatched,
        } = Decisions::of(&parsed, rules);
        if !unmatched.is_empty() {
            return Err(TranscriptError::Unmatched {
                transcript: id.to_owned(),
                source: Unmatched {
                    messages: unmatched,
                },
            });
        }
        let decided = |m: &favur_context::import::IncomingMessage<'_>| {
            by_index
                .get(m.index())
                .cloned()
                .flatten()
                .ok_or_else(|| favur_context::import::Unclassified("not classified".into()))
        };
        let messages = parsed
            .classify(&Decided::classifier(&decided))
            .map_err(|source| TranscriptError::Import {
                transcript: id.to_owned(),
                source,
            })?;
        Ok(ClassifiedTranscript {
            id: id.to_owned(),
            messages,
            results,
            decisions,
            answers,
        })
    }

    /// The message at `index`.
    pub fn message(&self, index: usize) -> Option<&Message> {
        self.messages.get(index).map(|m| m.classified.message())
    }
}

/// What the rules decided for each message of a parsed transcript, before the import:
/// each message classified once.
struct Decisions {
    /// Per classified message, in order.
    decisions: Vec<Decided>,
    /// The decision by message index, handed to the import as it is.
    by_index: Vec<Option<import::Decision>>,
    /// Per message: whether it is a tool result.
    results: Vec<bool>,
    /// Per message: the call it answers.
    answers: Vec<Option<ToolCall>>,
    /// The messages no rule matched.
    unmatched: Vec<UnmatchedMessage>,
}

impl Decisions {
    fn of(parsed: &import::Transcript, rules: &Rules) -> Decisions {
        let n = parsed.messages().len();
        let mut out = Decisions {
            decisions: Vec::with_capacity(n),
            by_index: vec![None; n],
            results: Vec::with_capacity(n),
            answers: Vec::with_capacity(n),
            unmatched: Vec::new(),
        };
        for i in 0..n {
            let Some(incoming) = parsed.incoming(i) else {
                continue;
            };
            let text = incoming.text();
            let arguments = incoming.arguments().map(|a| a.to_json_string());
            let mut facts = MessageFacts::from_incoming(&incoming).with_text(&text);
            facts.arguments = arguments.as_deref();
            out.results.push(incoming.is_result());
            out.answers.push(incoming.answers().cloned());
            let Some(rule) = rules.rule_for(&facts) else {
                out.unmatched.push(UnmatchedMessage::of(&facts));
                continue;
            };
            let mut d = rules.decision(rule);
            d.key = rules.key_for(rule, &facts);
            d.key_part = rules.key_part_for(rule, &facts);
            out.decisions.push(Decided {
                class: d.class,
                rule,
                pin: d.pin,
            });
            if let Some(slot) = out.by_index.get_mut(i) {
                *slot = Some(d);
            }
        }
        out
    }
}

/// Why a transcript could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TranscriptError {
    /// The file could not be read.
    #[error("cannot read transcript {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("transcript {} is not valid JSON: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's error.
        source: serde_json::Error,
    },
    /// The import rejected it (the error names the message index).
    #[error("transcript {transcript}: {source}")]
    Import {
        /// The transcript id.
        transcript: String,
        /// What the import said.
        source: ImportError,
    },
    /// Messages no rule matched.
    #[error("transcript {transcript}: {source}")]
    Unmatched {
        /// The transcript id.
        transcript: String,
        /// The messages.
        source: Unmatched,
    },
}

/// The format of a transcript document: mini-swe-agent when it says so (`format` starts
/// with `mini-swe-agent`, or a `trajectory_format`/`info` field), Gemini when it has
/// `contents` or `systemInstruction`, Anthropic when it has a top-level `system` or
/// content blocks of type `tool_use`/`tool_result`, OpenAI Responses when it has
/// `input`/`output` lists or typed Responses items, OpenAI otherwise.
pub fn detect_format(value: &Value) -> Format {
    if let Some(f) = value.get("format").and_then(Value::as_str)
        && f.starts_with("mini-swe-agent")
    {
        return Format::MiniSweAgent;
    }
    if value.get("trajectory_format").is_some() || value.get("info").is_some() {
        return Format::MiniSweAgent;
    }
    if value.get("contents").is_some() || value.get("systemInstruction").is_some() {
        return Format::Gemini;
    }
    if value.get("system").is_some() {
        return Format::Anthropic;
    }
    if is_responses(value) {
        return Format::Responses;
    }
    let messages = match value {
        Value::Array(a) => Some(a),
        other => other.get("messages").and_then(Value::as_array),
    };
    let anthropic_blocks = messages.is_some_and(|ms| {
        ms.iter().any(|m| {
            m.get("content")
                .and_then(Value::as_array)
                .is_some_and(|blocks| {
                    blocks.iter().any(|b| {
                        matches!(
                            b.get("type").and_then(Value::as_str),
                            Some("tool_use" | "tool_result")
                        )
                    })
                })
        })
    });
    if anthropic_blocks {
        Format::Anthropic
    } else {
        Format::OpenAi
    }
}

/// Whether `value` is a Responses transcript: an object with `input` or `output`, or a
/// list holding a typed Responses item (`function_call`, `function_call_output`,
/// `reasoning`).
fn is_responses(value: &Value) -> bool {
    match value {
        Value::Object(o) => o.contains_key("input") || o.contains_key("output"),
        Value::Array(items) => items.iter().any(|i| {
            matches!(
                i.get("type").and_then(Value::as_str),
                Some("function_call" | "function_call_output" | "reasoning")
            )
        }),
        _ => false,
    }
}

/// Reads, imports and classifies a transcript file. `format` forces a format; `None`
/// detects it (see [`detect_format`]).
pub fn load(
    path: impl AsRef<Path>,
    format: Option<Format>,
    rules: &Rules,
) -> Result<ClassifiedTranscript, TranscriptError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| TranscriptError::Io {
        path: path.to_owned(),
        source,
    })?;
    let value: Value = serde_json::from_str(&text).map_err(|source| TranscriptError::Json {
        path: path.to_owned(),
        source,
    })?;
    let fallback_id = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let id = value
        .get("instance_id")
        .and_then(Value::as_str)
        .map_or(fallback_id, str::to_owned);
    let format = format.unwrap_or_else(|| detect_format(&value));
    ClassifiedTranscript::from_value(&id, format, &value, rules)
}

/// Whether a message is one the model answered with (an assistant turn): a request is
/// made before each.
pub(crate) fn is_answer(m: &Message) -> bool {
    m.role == Role::Assistant
}

#[cfg(test)]
mod tests;
