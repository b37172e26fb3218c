//! What goes wrong with a rules file or a classification: messages no rule matched, and
//! why a rules file was rejected.

use std::fmt;
use std::path::PathBuf;

use super::MessageFacts;
use crate::model::message::Role;

/// Messages that no rule matched, in a file without a `default` class.
///
/// ```
/// use favur_context::import::rules::{MessageFacts, Rules};
/// use favur_context::Role;
/// let rules = Rules::from_toml("[[rule]]\nname = \"u\"\nrole = \"user\"\nclass = \"strict\"\n")?;
/// let err = rules.classify_all(&[MessageFacts::new(4, Role::Tool).with_tool("bash").with_text("total 0")]).unwrap_err();
/// assert_eq!(err.to_string(), "1 message matched no rule and the rules file names no `default` class:\n  message 4: role tool, tool `bash`: \"total 0\"");
/// # Ok::<(), favur_context::import::rules::RulesError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Unmatched {
    /// The messages, in transcript order.
    pub messages: Vec<UnmatchedMessage>,
}

impl fmt::Display for Unmatched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.messages.len();
        write!(
            f,
            "{n} message{} matched no rule and the rules file names no `default` class:",
            if n == 1 { "" } else { "s" }
        )?;
        for m in &self.messages {
            write!(f, "\n  {m}")?;
        }
        Ok(())
    }
}

/// One message that no rule matched.
///
/// ```
/// use favur_context::import::rules::UnmatchedMessage;
/// let m = UnmatchedMessage { index: 2, role: favur_context::Role::User, tool: None, excerpt: "hi".into() };
/// assert_eq!(m.to_string(), "message 2: role user: \"hi\"");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnmatchedMessage {
    /// Position in the transcript.
    pub index: usize,
    /// Role.
    pub role: Role,
    /// Tool name, if any.
    pub tool: Option<String>,
    /// The start of its text (at most 60 characters, one line).
    pub excerpt: String,
}

impl UnmatchedMessage {
    /// The listing of a message from its facts (the excerpt is its text's start, on one line).
    ///
    /// ```
    /// use favur_context::import::rules::{MessageFacts, UnmatchedMessage};
    /// let m = UnmatchedMessage::of(&MessageFacts::new(1, favur_context::Role::User).with_text("a\nb"));
    /// assert_eq!(m.excerpt, "a b");
    /// ```
    pub fn of(f: &MessageFacts<'_>) -> Self {
        let flat: String = f
            .text
            .chars()
            .map(|c| if c.is_whitespace() { ' ' } else { c })
            .collect();
        let flat = flat.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut excerpt: String = flat.chars().take(60).collect();
        if flat.chars().count() > 60 {
            excerpt.push('…');
        }
        UnmatchedMessage {
            index: f.index,
            role: f.role,
            tool: f.tool.map(str::to_owned),
            excerpt,
        }
    }
}

impl fmt::Display for UnmatchedMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "message {}: role {}", self.index, self.role)?;
        if let Some(tool) = &self.tool {
            write!(f, ", tool `{tool}`")?;
        }
        write!(f, ": {:?}", self.excerpt)
    }
}

/// Why a rules file was rejected. Rule numbers are 1-based, in file order; rule 0 means
/// the top level of the file.
///
/// ```
/// use favur_context::import::rules::{Rules, RulesError};
/// let err = Rules::from_toml("[[rule]]\nname = \"x\"\nclass = \"strict\"\ncommand = \"(unclosed\"\n").unwrap_err();
/// assert!(matches!(err, RulesError::InvalidRegex { rule: 1, ref field, .. } if field == "command"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RulesError {
    /// The file could not be read.
    #[error("cannot read rules file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The text is not valid TOML.
    #[error("rules file is not valid TOML at line {line}, column {column}: {message}")]
    Syntax {
        /// 1-based line (0 if unknown).
        line: usize,
        /// 1-based column (0 if unknown).
        column: usize,
        /// What the TOML parser said.
        message: String,
    },
    /// The file has no `[[rule]]`.
    #[error("rules file has no rules: add at least one `[[rule]]` table")]
    NoRules,
    /// A required field is missing.
    #[error("{}: missing field `{field}`", Loc(*rule, name.as_deref()))]
    MissingField {
        /// Rule number (1-based).
        rule: usize,
        /// The rule's name, if it has one.
        name: Option<String>,
        /// The missing field.
        field: &'static str,
    },
    /// A field this format does not know (a typo, often).
    #[error("{}: unknown field `{field}` (expected one of `name`, `role`, `tool`, `command`, `arguments`, `class`{})", Loc(*rule, name.as_deref()), if *rule == 0 { ", or at the top level `default`, `rule`" } else { "" })]
    UnknownField {
        /// Rule number (1-based; 0 for the top level).
        rule: usize,
        /// The rule's name, if known.
        name: Option<String>,
        /// The unknown field.
        field: String,
    },
    /// A field has a value of the wrong type or an unknown value.
    #[error("{}: field `{field}` must be {expected}, found {found}", Loc(*rule, name.as_deref()))]
    InvalidValue {
        /// Rule number (1-based; 0 for the top level).
        rule: usize,
        /// The rule's name, if known.
        name: Option<String>,
        /// The field.
        field: String,
        /// What was expected.
        expected: &'static str,
        /// What was found.
        found: String,
    },
    /// A regex field does not compile.
    #[error("{}: field `{field}` is not a valid regex: {error}", Loc(*rule, name.as_deref()))]
    InvalidRegex {
        /// Rule number (1-based).
        rule: usize,
        /// The rule's name, if known.
        name: Option<String>,
        /// The field.
        field: String,
        /// The regex compiler's message.
        error: String,
    },
    /// Two rules have the same name.
    #[error(
        "rule {rule}: name `{name}` is already used by rule {first}; rule names must be unique"
    )]
    DuplicateName {
        /// The later rule.
        rule: usize,
        /// The name.
        name: String,
        /// The earlier rule with the same name.
        first: usize,
    },
}

struct Loc<'a>(usize, Option<&'a str>);

impl fmt::Display for Loc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.0, self.1) {
            (0, _) => f.write_str("top level"),
            (n, Some(name)) => write!(f, "rule {n} (`{name}`)"),
            (n, None) => write!(f, "rule {n}"),
        }
    }
}
