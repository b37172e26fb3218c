//! A rules classifier: an ordered list of rules, read from TOML, that gives each message of
//! a recorded transcript its retention class.
//!
//! Importing a transcript needs a class for every message, and there is no default class.
//! A rules file names the classes once, in one place, by matching on what a message is:
//! its role, the tool it calls or answers, and the command or arguments of that call. The
//! first rule that matches decides; a message that no rule matches is an error listing it,
//! unless the file names a `default` class explicitly.
//!
//! # Format
//!
//! ```toml
//! # Optional. Without it, a message that no rule matches is an error.
//! default = "fuzzy"
//!
//! [[rule]]
//! name = "listings"                  # required, unique: the "append site" in reports
//! role = "tool"                      # optional: a role or a list of roles
//! tool = "^bash$"                    # optional: regex on the tool name
//! command = '^\s*(ls|find|grep)\b'   # optional: regex on the command
//! arguments = '"path"'               # optional: regex on the raw JSON arguments
//! first = true                       # optional: only the first message of its role
//!                                    #   (false: every message of its role but the first)
//! class = "forgettable"              # required: forgettable, fuzzy or strict
//! pin = true                         # optional (default false): pin the message
//! key = "path"                       # optional: "path" or "command" (below)
//! ```
//!
//! `key` gives what a rule matches a [supersession key](crate::Classified::with_key):
//! `"path"`, the file the command reads or writes (`sed -n 1,40p src/a.py`, `cat src/a.py`,
//! `sed -i 's/x/y/' src/a.py`, `cat > src/a.py <<EOF` all give `src/a.py`); `"command"`,
//! the command itself, whitespace-normalised (a rerun of `pytest tests/x.py` gives the
//! same key). An older entry with the key of a newer one is superseded: compaction takes
//! it before any current material of its class. A `"path"` key also records which
//! [part](crate::message::KeyPart) of the file the command shows (`sed -n '580,620p'`
//! lines 580 to 620, `head -n 50` lines 1 to 50, a `tail` or a `grep` after it an unknown
//! part): a view of some lines supersedes only an earlier view of lines it covers, and
//! a view of the whole file or an edit of it supersedes every earlier view.
//!
//! `first = true` with `role = "user"` matches the first user message of a transcript:
//! the task. A rule with `pin = true` pins what it matches: the message is recorded with
//! [`History::pin`](crate::History::pin) instead of appended, so it is sent verbatim, in
//! its place, in every request (a pinned system message goes to the system messages).
//!
//! Every matcher a rule gives must match (they are combined with "and"); a rule with no
//! matcher matches every message. Regexes use the [`regex`] crate's syntax and match
//! anywhere in the text unless anchored with `^`/`$`. They run in linear time in the
//! length of the text, so a rules file cannot make a replay hang on a long command.
//!
//! For a tool call, the *command* is the `command` (or `cmd`) string of its JSON arguments
//! (the shell command of a `bash` tool), or the fenced bash block of a mini-swe-agent
//! plain-chat action; `arguments` sees the raw JSON arguments. A tool result (or a
//! plain-chat observation, which counts as role `tool`) is matched with the tool name,
//! command and arguments of the call it answers, so a rule can give the output of `ls`
//! one class and the output of `pytest` another.
//!
//! [`Rules`] implements the import's [`Classifier`](crate::import::Classifier), so a rules
//! file classifies an import directly.
//!
//! ```
//! use favur_context::import::rules::{MessageFacts, Rules};
//! use favur_context::{Retention, Role};
//!
//! let rules = Rules::from_toml(r#"
//!     [[rule]]
//!     name = "listings"
//!     role = "tool"
//!     command = '^\s*(ls|find)\b'
//!     class = "forgettable"
//!
//!     [[rule]]
//!     name = "everything else"
//!     class = "strict"
//! "#)?;
//! let ls = MessageFacts::new(3, Role::Tool).with_tool("bash").with_command("ls -la");
//! let decision = rules.classify(&ls).expect("a rule matches");
//! assert_eq!(decision.class, Retention::Forgettable);
//! assert_eq!(decision.rule.as_deref(), Some("listings"));
//! # Ok::<(), favur_context::import::rules::RulesError>(())
//! ```

use std::path::Path;

use regex::Regex;

use crate::model::message::{Arguments, Role};
use crate::model::retention::Retention;

mod error;
mod import;
mod key;
mod parse;

pub use error::{RulesError, Unmatched, UnmatchedMessage};
pub(crate) use key::KeyFrom;
use parse::{invalid_value, line_column, parse_class, parse_rule, type_name};

/// A parsed, validated rules file.
///
/// ```
/// use favur_context::import::rules::Rules;
/// let rules = Rules::from_toml("default = \"fuzzy\"\n[[rule]]\nname = \"all\"\nclass = \"strict\"\n")?;
/// assert_eq!(rules.len(), 1);
/// assert_eq!(rules.default_class(), Some(favur_context::Retention::Fuzzy));
/// # Ok::<(), favur_context::import::rules::RulesError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Rules {
    rules: Vec<Rule>,
    default: Option<Retention>,
}

/// One rule of a rules file.
///
/// ```
/// use favur_context::import::rules::Rules;
/// let rules = Rules::from_toml("[[rule]]\nname = \"tests\"\ncommand = \"pytest\"\nclass = \"strict\"\n")?;
/// let rule = &rules.rules()[0];
/// assert_eq!(rule.name(), "tests");
/// assert_eq!(rule.class(), favur_context::Retention::Strict);
/// # Ok::<(), favur_context::import::rules::RulesError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Rule {
    name: String,
    roles: Option<Vec<Role>>,
    tool: Option<Regex>,
    command: Option<Regex>,
    arguments: Option<Regex>,
    first: Option<bool>,
    class: Retention,
    pin: bool,
    key: Option<KeyFrom>,
}

impl Rule {
    /// The rule's name (its "append site" in replay reports).
    ///
    /// ```
    /// # let rules = favur_context::import::rules::Rules::from_toml("[[rule]]\nname = \"a\"\nclass = \"fuzzy\"\n").unwrap();
    /// assert_eq!(rules.rules()[0].name(), "a");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The class the rule gives.
    ///
    /// ```
    /// # let rules = favur_context::import::rules::Rules::from_toml("[[rule]]\nname = \"a\"\nclass = \"fuzzy\"\n").unwrap();
    /// assert_eq!(rules.rules()[0].class(), favur_context::Retention::Fuzzy);
    /// ```
    pub fn class(&self) -> Retention {
        self.class
    }

    /// Whether the messages it matches are pinned (`pin = true`): recorded with
    /// [`History::pin`](crate::History::pin), shown verbatim in place in every request.
    ///
    /// ```
    /// # let rules = favur_context::import::rules::Rules::from_toml("[[rule]]\nname = \"task\"\nrole = \"user\"\nfirst = true\npin = true\nclass = \"strict\"\n").unwrap();
    /// assert!(rules.rules()[0].pin());
    /// ```
    pub fn pin(&self) -> bool {
        self.pin
    }

    /// Whether every matcher of this rule matches `facts`.
    ///
    /// ```
    /// use favur_context::import::rules::{MessageFacts, Rules};
    /// use favur_context::Role;
    /// let rules = Rules::from_toml("[[rule]]\nname = \"a\"\nrole = [\"user\", \"system\"]\nclass = \"strict\"\n")?;
    /// assert!(rules.rules()[0].matches(&MessageFacts::new(0, Role::User)));
    /// assert!(!rules.rules()[0].matches(&MessageFacts::new(1, Role::Tool)));
    /// # Ok::<(), favur_context::import::rules::RulesError>(())
    /// ```
    pub fn matches(&self, facts: &MessageFacts<'_>) -> bool {
        if let Some(roles) = &self.roles
            && !roles.contains(&facts.role)
        {
            return false;
        }
        if self.first.is_some_and(|first| first != facts.first) {
            return false;
        }
        let pairs = [
            (&self.tool, facts.tool),
            (&self.command, facts.command),
            (&self.arguments, facts.arguments),
        ];
        pairs.iter().all(|(re, text)| match re {
            None => true,
            Some(re) => text.is_some_and(|t| re.is_match(t)),
        })
    }
}

/// What a rule can see of one message.
///
/// ```
/// use favur_context::import::rules::MessageFacts;
/// use favur_context::Role;
/// let facts = MessageFacts::new(7, Role::Tool).with_tool("bash").with_command("pytest -x");
/// assert_eq!(facts.command, Some("pytest -x"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageFacts<'a> {
    /// Position of the message in its transcript (0-based).
    pub index: usize,
    /// Its role.
    pub role: Role,
    /// The tool it calls, or (for a result) the tool of the call it answers.
    pub tool: Option<&'a str>,
    /// The command of that call: the `command` string of its arguments, else the raw
    /// arguments.
    pub command: Option<&'a str>,
    /// The raw JSON arguments of that call.
    pub arguments: Option<&'a str>,
    /// The message's text (used only for excerpts in error reports).
    pub text: &'a str,
    /// Whether it is the first message of its role in its transcript (the first user
    /// message is the task).
    pub first: bool,
}

impl<'a> MessageFacts<'a> {
    /// Facts with only a position and a role.
    ///
    /// ```
    /// let f = favur_context::import::rules::MessageFacts::new(0, favur_context::Role::User);
    /// assert!(f.tool.is_none());
    /// ```
    pub fn new(index: usize, role: Role) -> Self {
        MessageFacts {
            index,
            role,
            tool: None,
            command: None,
            arguments: None,
            text: "",
            first: false,
        }
    }

    /// As the first message of its role in its transcript.
    ///
    /// ```
    /// let f = favur_context::import::rules::MessageFacts::new(0, favur_context::Role::User).first_of_role();
    /// assert!(f.first);
    /// ```
    pub fn first_of_role(mut self) -> Self {
        self.first = true;
        self
    }

    /// With the tool name.
    ///
    /// ```
    /// let f = favur_context::import::rules::MessageFacts::new(0, favur_context::Role::Tool).with_tool("bash");
    /// assert_eq!(f.tool, Some("bash"));
    /// ```
    pub fn with_tool(mut self, tool: &'a str) -> Self {
        self.tool = Some(tool);
        self
    }

    /// With the command.
    ///
    /// ```
    /// let f = favur_context::import::rules::MessageFacts::new(0, favur_context::Role::Tool).with_command("ls");
    /// assert_eq!(f.command, Some("ls"));
    /// ```
    pub fn with_command(mut self, command: &'a str) -> Self {
        self.command = Some(command);
        self
    }

    /// With the raw JSON arguments.
    ///
    /// ```
    /// let f = favur_context::import::rules::MessageFacts::new(0, favur_context::Role::Tool).with_arguments("{}");
    /// assert_eq!(f.arguments, Some("{}"));
    /// ```
    pub fn with_arguments(mut self, arguments: &'a str) -> Self {
        self.arguments = Some(arguments);
        self
    }

    /// With the text (shown in excerpts when nothing matches).
    ///
    /// ```
    /// let f = favur_context::import::rules::MessageFacts::new(0, favur_context::Role::User).with_text("hi");
    /// assert_eq!(f.text, "hi");
    /// ```
    pub fn with_text(mut self, text: &'a str) -> Self {
        self.text = text;
        self
    }
}

/// The text of a call's arguments as a person reads it: the `command` string of a JSON
/// object, else the raw arguments.
///
/// ```
/// use favur_context::message::Arguments;
/// use favur_context::import::rules::command_of;
/// assert_eq!(command_of(&Arguments::parse(r#"{"command":"ls -la"}"#)), "ls -la");
/// assert_eq!(command_of(&Arguments::parse(r#"{"path":"a.rs"}"#)), r#"{"path":"a.rs"}"#);
/// ```
pub fn command_of(arguments: &Arguments) -> String {
    match arguments {
        Arguments::Json(v) => match v.get("command").and_then(|c| c.as_str()) {
            Some(c) => c.to_owned(),
            None => v.to_string(),
        },
        Arguments::Invalid(raw) => raw.clone(),
    }
}

pub use crate::import::Decision;

/// A rule of a [`Rules`] file, or its explicit default.
///
/// ```
/// use favur_context::import::rules::RuleRef;
/// assert_ne!(RuleRef::Rule(0), RuleRef::Default);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleRef {
    /// The rule at this position (0-based).
    Rule(usize),
    /// The file's `default` class.
    Default,
}

/// Name under which the default class appears in reports.
///
/// ```
/// assert_eq!(favur_context::import::rules::DEFAULT_RULE_NAME, "(default)");
/// ```
pub const DEFAULT_RULE_NAME: &str = "(default)";

impl Rules {
    /// Parses and validates a rules file's text.
    ///
    /// ```
    /// use favur_context::import::rules::{Rules, RulesError};
    /// let err = Rules::from_toml("[[rule]]\nname = \"a\"\n").unwrap_err();
    /// assert!(matches!(err, RulesError::MissingField { rule: 1, .. }));
    /// assert_eq!(err.to_string(), "rule 1 (`a`): missing field `class`");
    /// ```
    pub fn from_toml(text: &str) -> Result<Rules, RulesError> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let (line, column) = e
                .span()
                .map(|s| line_column(text, s.start))
                .unwrap_or((0, 0));
            RulesError::Syntax {
                line,
                column,
                message: e.message().to_owned(),
            }
        })?;
        let mut default = None;
        let mut raw_rules: Option<&Vec<toml::Value>> = None;
        for (key, value) in &table {
            match key.as_str() {
                "default" => {
                    default = Some(parse_class(value, 0, None, "default")?);
                }
                "rule" => match value {
                    toml::Value::Array(items) => raw_rules = Some(items),
                    other => {
                        let expected = "an array of tables (`[[rule]]`)";
                        return Err(invalid_value(0, None, "rule", expected, type_name(other)));
                    }
                },
                other => {
                    return Err(RulesError::UnknownField {
                        rule: 0,
                        name: None,
                        field: other.to_owned(),
                    });
                }
            }
        }
        let raw_rules = match raw_rules {
            Some(r) if !r.is_empty() => r,
            _ => return Err(RulesError::NoRules),
        };
        let mut rules: Vec<Rule> = Vec::with_capacity(raw_rules.len());
        // Each name's rule number: the duplicate check is O(1) per rule.
        let mut numbers: std::collections::HashMap<String, usize> =
            std::collections::HashMap::with_capacity(raw_rules.len());
        for (i, raw) in raw_rules.iter().enumerate() {
            let number = i + 1;
            let rule = parse_rule(raw, number)?;
            if let Some(&first) = numbers.get(&rule.name) {
                return Err(RulesError::DuplicateName {
                    rule: number,
                    name: rule.name,
                    first,
                });
            }
            numbers.insert(rule.name.clone(), number);
            rules.push(rule);
        }
        Ok(Rules { rules, default })
    }

    /// Reads and parses a rules file.
    ///
    /// ```
    /// use favur_context::import::rules::{Rules, RulesError};
    /// let err = Rules::load("/no/such/rules.toml").unwrap_err();
    /// assert!(matches!(err, RulesError::Io { .. }));
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<Rules, RulesError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| RulesError::Io {
            path: path.to_owned(),
            source,
        })?;
        Rules::from_toml(&text)
    }

    /// The rules, in order.
    ///
    /// ```
    /// # let rules = favur_context::import::rules::Rules::from_toml("[[rule]]\nname = \"a\"\nclass = \"fuzzy\"\n").unwrap();
    /// assert_eq!(rules.rules().len(), 1);
    /// ```
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Number of rules.
    ///
    /// ```
    /// # let rules = favur_context::import::rules::Rules::from_toml("[[rule]]\nname = \"a\"\nclass = \"fuzzy\"\n").unwrap();
    /// assert!(!rules.is_empty());
    /// ```
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether there are no rules (never true for a parsed file).
    ///
    /// ```
    /// # let rules = favur_context::import::rules::Rules::from_toml("[[rule]]\nname = \"a\"\nclass = \"fuzzy\"\n").unwrap();
    /// assert!(!rules.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The explicit default class, if the file names one.
    ///
    /// ```
    /// # let rules = favur_context::import::rules::Rules::from_toml("[[rule]]\nname = \"a\"\nclass = \"fuzzy\"\n").unwrap();
    /// assert_eq!(rules.default_class(), None);
    /// ```
    pub fn default_class(&self) -> Option<Retention> {
        self.default
    }

    /// The name of a rule, or [`DEFAULT_RULE_NAME`] for the default.
    ///
    /// ```
    /// use favur_context::import::rules::{RuleRef, Rules, DEFAULT_RULE_NAME};
    /// # let rules = Rules::from_toml("[[rule]]\nname = \"a\"\nclass = \"fuzzy\"\n").unwrap();
    /// assert_eq!(rules.rule_name(RuleRef::Rule(0)), "a");
    /// assert_eq!(rules.rule_name(RuleRef::Default), DEFAULT_RULE_NAME);
    /// ```
    pub fn rule_name(&self, rule: RuleRef) -> &str {
        match rule {
            RuleRef::Rule(i) => self.rules.get(i).map_or("(unknown rule)", |r| &r.name),
            RuleRef::Default => DEFAULT_RULE_NAME,
        }
    }

    /// The first rule matching `facts`, or the default; `None` if neither.
    ///
    /// ```
    /// use favur_context::import::rules::{MessageFacts, Rules};
    /// use favur_context::Role;
    /// let rules = Rules::from_toml("[[rule]]\nname = \"users\"\nrole = \"user\"\nclass = \"strict\"\n")?;
    /// assert!(rules.classify(&MessageFacts::new(0, Role::User)).is_some());
    /// assert!(rules.classify(&MessageFacts::new(1, Role::Assistant)).is_none());
    /// # Ok::<(), favur_context::import::rules::RulesError>(())
    /// ```
    pub fn classify(&self, facts: &MessageFacts<'_>) -> Option<Decision> {
        self.rule_for(facts).map(|rule| Decision {
            key: self.key_for(rule, facts),
            key_part: self.key_part_for(rule, facts),
            ..self.decision(rule)
        })
    }

    /// The rule that decides for `facts`: the first that matches, else the default.
    ///
    /// ```
    /// use favur_context::import::rules::{MessageFacts, RuleRef, Rules};
    /// use favur_context::Role;
    /// let rules = Rules::from_toml("default = \"fuzzy\"\n[[rule]]\nname = \"users\"\nrole = \"user\"\nclass = \"strict\"\n")?;
    /// assert_eq!(rules.rule_for(&MessageFacts::new(0, Role::User)), Some(RuleRef::Rule(0)));
    /// assert_eq!(rules.rule_for(&MessageFacts::new(1, Role::Tool)), Some(RuleRef::Default));
    /// # Ok::<(), favur_context::import::rules::RulesError>(())
    /// ```
    pub fn rule_for(&self, facts: &MessageFacts<'_>) -> Option<RuleRef> {
        match self.rules.iter().position(|r| r.matches(facts)) {
            Some(i) => Some(RuleRef::Rule(i)),
            None => self.default.map(|_| RuleRef::Default),
        }
    }

    /// The decision `rule` gives: its class, its name and whether it pins (the default
    /// never pins). A rule this file does not have gives the default class, or strict.
    ///
    /// ```
    /// use favur_context::import::rules::{RuleRef, Rules};
    /// let rules = Rules::from_toml("[[rule]]\nname = \"task\"\npin = true\nclass = \"strict\"\n")?;
    /// let d = rules.decision(RuleRef::Rule(0));
    /// assert_eq!((d.rule.as_deref(), d.pin), (Some("task"), true));
    /// # Ok::<(), favur_context::import::rules::RulesError>(())
    /// ```
    pub fn decision(&self, rule: RuleRef) -> Decision {
        let (class, pin) = match rule {
            RuleRef::Rule(i) => self
                .rules
                .get(i)
                .map_or((Retention::Strict, false), |r| (r.class, r.pin)),
            RuleRef::Default => (self.default.unwrap_or(Retention::Strict), false),
        };
        Decision {
            class,
            rule: Some(self.rule_name(rule).to_owned().into()),
            pin,
            key: None,
            key_part: None,
        }
    }

    /// Classifies every message, or lists every message no rule matched.
    ///
    /// ```
    /// use favur_context::import::rules::{MessageFacts, Rules};
    /// use favur_context::Role;
    /// let rules = Rules::from_toml("[[rule]]\nname = \"users\"\nrole = \"user\"\nclass = \"strict\"\n")?;
    /// let facts = [MessageFacts::new(0, Role::User), MessageFacts::new(1, Role::Assistant).with_text("ok")];
    /// let err = rules.classify_all(&facts).unwrap_err();
    /// assert_eq!(err.messages.len(), 1);
    /// assert_eq!(err.messages[0].index, 1);
    /// # Ok::<(), favur_context::import::rules::RulesError>(())
    /// ```
    pub fn classify_all(&self, facts: &[MessageFacts<'_>]) -> Result<Vec<Decision>, Unmatched> {
        let mut out = Vec::with_capacity(facts.len());
        let mut unmatched = Vec::new();
        for f in facts {
            match self.classify(f) {
                Some(d) => out.push(d),
                None => unmatched.push(UnmatchedMessage::of(f)),
            }
        }
        if unmatched.is_empty() {
            Ok(out)
        } else {
            Err(Unmatched {
                messages: unmatched,
            })
        }
    }
}
