//! A rules file as the import's classifier.

use super::{MessageFacts, Rules, UnmatchedMessage};
use crate::model::message::{Arguments, Role};

impl<'a> MessageFacts<'a> {
    /// What a rule sees of a message being imported: a tool result, or an observation
    /// from the environment in mini-swe-agent's plain chat (a `user` message answering
    /// the action), has the role `tool`; its tool, command and arguments are those of the
    /// call it answers. `text` is left empty (set it with [`with_text`](Self::with_text)
    /// for excerpts).
    ///
    /// ```
    /// use favur_context::import::{parse, Format};
    /// use favur_context::import::rules::MessageFacts;
    /// use favur_context::Role;
    /// let t = parse(Format::MiniSweAgent, r#"[{"role": "user", "content": "task"},
    ///   {"role": "assistant", "content": "```bash\nls -la\n```"},
    ///   {"role": "user", "content": "<returncode>0</returncode>\n<output>\na\n</output>"}]"#).unwrap();
    /// let incoming = t.incoming(2).unwrap();
    /// let facts = MessageFacts::from_incoming(&incoming);
    /// assert_eq!((facts.role, facts.command), (Role::Tool, Some("ls -la")));
    /// ```
    pub fn from_incoming(m: &crate::import::IncomingMessage<'a>) -> Self {
        let role = if m.is_result() { Role::Tool } else { m.role() };
        MessageFacts {
            index: m.index(),
            role,
            tool: m.tool_name(),
            command: m.command(),
            arguments: None,
            text: "",
            first: m.is_first_of_role(),
        }
    }
}

/// A rules file is an import classifier: `import(&mut history, format, json, &rules)`.
/// Each entry's call site names the rule (`import:<format>/<rule name>`), so reports can
/// group by rule. A message no rule matches (without a `default`) is declined, and the
/// import fails listing every such message; the history is unchanged.
///
/// ```
/// use favur_context::import::{import, Format};
/// use favur_context::import::rules::Rules;
/// use favur_context::{History, Retention};
/// let rules = Rules::from_toml(r#"
///     [[rule]]
///     name = "listings"
///     role = "tool"
///     command = '^ls\b'
///     class = "forgettable"
///     [[rule]]
///     name = "people"
///     role = ["user", "system"]
///     class = "strict"
/// "#)?;
/// let json = r#"[{"role": "user", "content": "Fix it."},
///   {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
///     "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]},
///   {"role": "tool", "tool_call_id": "c1", "content": "src"}]"#;
/// let mut h = History::new();
/// let err = import(&mut h, Format::OpenAi, json, &rules).unwrap_err(); // the assistant turn
/// assert!(err.to_string().contains("message 1"));
/// assert!(h.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl crate::import::Classifier for Rules {
    fn classify(
        &self,
        message: &crate::import::IncomingMessage<'_>,
    ) -> Result<crate::import::Decision, crate::import::Unclassified> {
        let arguments = message.arguments().map(Arguments::to_json_string);
        let text = message.text();
        let mut facts = MessageFacts::from_incoming(message).with_text(&text);
        facts.arguments = arguments.as_deref();
        match Rules::classify(self, &facts) {
            Some(d) => Ok(d),
            None => Err(crate::import::Unclassified(format!(
                "no rule matches: {}",
                UnmatchedMessage::of(&facts)
            ))),
        }
    }
}
