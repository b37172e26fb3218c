//! Transcripts: loading recorded runs and classifying their messages with a rules file.

use std::path::{Path, PathBuf};

use favur_context::rules::{Decision, Rules, Unmatched};
use favur_context::{Message, Role};

/// A transcript as messages, before classification.
///
/// ```
/// use favur_context_cli::transcript::Transcript;
/// let t = Transcript { id: "t".into(), messages: vec![favur_context::Message::user("hi")] };
/// assert_eq!(t.messages.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    /// Its id (the file name without extension, or the `instance_id` it names).
    pub id: String,
    /// Its messages, in order.
    pub messages: Vec<Message>,
}

/// A transcript whose every message has a class and the rule that gave it.
///
/// ```
/// use favur_context::rules::Rules;
/// use favur_context_cli::transcript::{ClassifiedTranscript, Transcript};
/// let rules = Rules::from_toml("[[rule]]\nname = \"all\"\nclass = \"strict\"\n")?;
/// let t = Transcript { id: "t".into(), messages: vec![favur_context::Message::user("hi")] };
/// let c = ClassifiedTranscript::classify(t, &rules)?;
/// assert_eq!(c.decisions[0].class, favur_context::Retention::Strict);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ClassifiedTranscript {
    /// Its id.
    pub id: String,
    /// Its messages, in order.
    pub messages: Vec<Message>,
    /// The class and rule of each message (same length as `messages`).
    pub decisions: Vec<Decision>,
}

impl ClassifiedTranscript {
    /// Classifies every message with `rules`; lists the messages no rule matched.
    ///
    /// ```
    /// use favur_context::rules::Rules;
    /// use favur_context_cli::transcript::{ClassifiedTranscript, Transcript};
    /// let rules = Rules::from_toml("[[rule]]\nname = \"users\"\nrole = \"user\"\nclass = \"strict\"\n")?;
    /// let t = Transcript { id: "t".into(), messages: vec![favur_context::Message::assistant("hi")] };
    /// assert!(ClassifiedTranscript::classify(t, &rules).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn classify(transcript: Transcript, rules: &Rules) -> Result<Self, Unmatched> {
        let facts = Rules::facts_of(&transcript.messages);
        let borrowed: Vec<_> = facts.iter().map(|f| f.as_facts()).collect();
        let decisions = rules.classify_all(&borrowed)?;
        Ok(ClassifiedTranscript {
            id: transcript.id,
            messages: transcript.messages,
            decisions,
        })
    }
}

/// Why a transcript could not be loaded.
///
/// ```
/// use favur_context_cli::transcript::{load, TranscriptError};
/// assert!(matches!(load("/no/such/file.json"), Err(TranscriptError::Io { .. })));
/// ```
#[derive(Debug, thiserror::Error)]
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
    /// The importer rejected a message.
    #[error("transcript {}: {message}", path.display())]
    Import {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the message index.
        message: String,
    },
}

/// Reads a transcript file: a JSON object with a `messages` array (the shared traces'
/// schema, with an optional `instance_id`), or a bare array of chat messages.
///
/// ```
/// let dir = std::env::temp_dir().join("favur-load-doc.json");
/// std::fs::write(&dir, r#"{"instance_id": "x", "messages": [{"role": "user", "content": "hi"}]}"#)?;
/// let t = favur_context_cli::transcript::load(&dir)?;
/// assert_eq!(t.id, "x");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load(path: impl AsRef<Path>) -> Result<Transcript, TranscriptError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| TranscriptError::Io {
        path: path.to_owned(),
        source,
    })?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|source| TranscriptError::Json {
            path: path.to_owned(),
            source,
        })?;
    let fallback_id = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let id = value
        .get("instance_id")
        .and_then(|v| v.as_str())
        .map_or(fallback_id, str::to_owned);
    let messages =
        crate::import::messages_of(&value).map_err(|message| TranscriptError::Import {
            path: path.to_owned(),
            message,
        })?;
    Ok(Transcript { id, messages })
}

/// Whether a message is one the model answered to (an assistant turn): a request is made
/// before each.
pub(crate) fn is_answer(m: &Message) -> bool {
    m.role == Role::Assistant
}
