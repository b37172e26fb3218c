//! A message as a classifier sees it: its role, text, the call it answers, its place.

use std::borrow::Cow;

use serde_json::Value;

use super::{Format, TranscriptMessage};
use crate::model::message::{Arguments, Message, Part, Role, ToolCall};

/// What a classifier sees of each incoming message.
///
/// ```
/// use favur_context::Role;
/// use favur_context::import::{parse, Format};
/// let t = parse(Format::OpenAi, r#"[
///   {"role": "assistant", "content": "look", "tool_calls": [
///     {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"grep -rn foo .\"}"}}]},
///   {"role": "tool", "tool_call_id": "c1", "content": "<returncode>1</returncode><output></output>"}]"#).unwrap();
/// let result = t.incoming(1).unwrap();
/// assert_eq!(result.role(), Role::Tool);
/// assert!(result.is_result());
/// assert_eq!(result.tool_name(), Some("bash"));
/// assert_eq!(result.command(), Some("grep -rn foo ."));
/// assert_eq!(result.returncode(), Some(1));
/// assert_eq!(t.incoming(0).unwrap().text(), "look");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct IncomingMessage<'a> {
    pub(super) format: Format,
    pub(super) inner: &'a TranscriptMessage,
    pub(super) first: bool,
}

impl<'a> IncomingMessage<'a> {
    /// The transcript format.
    ///
    /// ```
    /// # use favur_context::import::{parse, Format};
    /// # let t = parse(Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    /// assert_eq!(t.incoming(0).unwrap().format(), Format::OpenAi);
    /// ```
    pub fn format(&self) -> Format {
        self.format
    }

    /// Index of the source message in the transcript.
    ///
    /// ```
    /// # use favur_context::import::{parse, Format};
    /// # let t = parse(Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    /// assert_eq!(t.incoming(0).unwrap().index(), 0);
    /// ```
    pub fn index(&self) -> usize {
        self.inner.index
    }

    /// The role of the message as imported (results are [`Role::Tool`]; plain-chat
    /// observations keep [`Role::User`], see [`is_result`](Self::is_result)).
    ///
    /// ```
    /// # use favur_context::import::{parse, Format};
    /// # let t = parse(Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    /// assert_eq!(t.incoming(0).unwrap().role(), favur_context::Role::User);
    /// ```
    pub fn role(&self) -> Role {
        self.inner.message.role
    }

    /// The whole message.
    ///
    /// ```
    /// # use favur_context::import::{parse, Format};
    /// # let t = parse(Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    /// assert_eq!(t.incoming(0).unwrap().message().parts.len(), 1);
    /// ```
    pub fn message(&self) -> &'a Message {
        &self.inner.message
    }

    /// The text: the text parts joined by newlines, or for a tool result its content.
    ///
    /// ```
    /// # use favur_context::import::{parse, Format};
    /// # let t = parse(Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    /// assert_eq!(t.incoming(0).unwrap().text(), "hi");
    /// ```
    pub fn text(&self) -> Cow<'a, str> {
        let m = &self.inner.message;
        let mut texts = m.parts.iter().filter_map(|p| match p {
            Part::Text(t) => Some(t.as_str()),
            Part::ToolResult(r) => Some(r.content.as_str()),
            _ => None,
        });
        match (texts.next(), texts.next()) {
            (None, _) => Cow::Borrowed(""),
            (Some(one), None) => Cow::Borrowed(one),
            (Some(a), Some(b)) => {
                let mut s = format!("{a}\n{b}");
                for t in texts {
                    s.push('\n');
                    s.push_str(t);
                }
                Cow::Owned(s)
            }
        }
    }

    /// Whether this is a tool result or an observation from the environment (a
    /// mini-swe-agent user message that answers the assistant's action).
    ///
    /// ```
    /// # use favur_context::import::{parse, Format};
    /// # let t = parse(Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    /// assert!(!t.incoming(0).unwrap().is_result());
    /// ```
    pub fn is_result(&self) -> bool {
        self.inner.is_result
    }

    /// Whether it is the first message of its role in the transcript (a tool result or a
    /// plain-chat observation counting as role `tool`): the first user message is the
    /// task.
    ///
    /// ```
    /// # use favur_context::import::{parse, Format};
    /// let t = parse(Format::OpenAi, r#"[{"role": "user", "content": "task"}, {"role": "user", "content": "more"}]"#).unwrap();
    /// assert!(t.incoming(0).unwrap().is_first_of_role());
    /// assert!(!t.incoming(1).unwrap().is_first_of_role());
    /// ```
    pub fn is_first_of_role(&self) -> bool {
        self.first
    }

    /// The tool calls of an assistant message.
    ///
    /// ```
    /// # use favur_context::import::{parse, Format};
    /// # let t = parse(Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    /// assert_eq!(t.incoming(0).unwrap().tool_calls().count(), 0);
    /// ```
    pub fn tool_calls(&self) -> impl Iterator<Item = &'a ToolCall> {
        self.inner.message.tool_calls()
    }

    /// The call this message is about: for a result or observation the call it answers;
    /// for an assistant message its first call (or, in plain chat, its parsed action).
    ///
    /// ```
    /// # use favur_context::import::{parse, Format};
    /// # let t = parse(Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    /// assert!(t.incoming(0).unwrap().call().is_none());
    /// ```
    pub fn call(&self) -> Option<&'a ToolCall> {
        if self.inner.is_result {
            return self.inner.action.as_ref();
        }
        self.inner
            .message
            .tool_calls()
            .next()
            .or(self.inner.action.as_ref())
    }

    /// For a result, the call it answers.
    ///
    /// ```
    /// # use favur_context::import::{parse, Format};
    /// # let t = parse(Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    /// assert!(t.incoming(0).unwrap().answers().is_none());
    /// ```
    pub fn answers(&self) -> Option<&'a ToolCall> {
        if self.inner.is_result {
            self.inner.action.as_ref()
        } else {
            None
        }
    }

    /// The tool name of [`call`](Self::call).
    ///
    /// ```
    /// # use favur_context::import::{parse, Format};
    /// # let t = parse(Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    /// assert_eq!(t.incoming(0).unwrap().tool_name(), None);
    /// ```
    pub fn tool_name(&self) -> Option<&'a str> {
        self.call().map(|c| c.name.as_str())
    }

    /// The arguments of [`call`](Self::call).
    ///
    /// ```
    /// # use favur_context::import::{parse, Format};
    /// # let t = parse(Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    /// assert!(t.incoming(0).unwrap().arguments().is_none());
    /// ```
    pub fn arguments(&self) -> Option<&'a Arguments> {
        self.call().map(|c| &c.arguments)
    }

    /// The shell command of [`call`](Self::call): its `command` (or `cmd`) string
    /// argument, or the fenced bash block of a plain-chat action.
    ///
    /// ```
    /// use favur_context::import::{parse, Format};
    /// let t = parse(Format::MiniSweAgent, r#"[{"role": "user", "content": "task"},
    ///   {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls -la\n```"},
    ///   {"role": "user", "content": "<returncode>0</returncode>\n<output>\na\n</output>"}]"#).unwrap();
    /// assert_eq!(t.incoming(1).unwrap().command(), Some("ls -la"));
    /// assert_eq!(t.incoming(2).unwrap().command(), Some("ls -la"));
    /// assert_eq!(t.incoming(2).unwrap().returncode(), Some(0));
    /// ```
    pub fn command(&self) -> Option<&'a str> {
        let args = self.arguments()?.as_json()?;
        args.get("command")
            .or_else(|| args.get("cmd"))
            .and_then(Value::as_str)
    }

    /// The `<returncode>N</returncode>` of a result, where the agent reports one.
    ///
    /// ```
    /// # use favur_context::import::{parse, Format};
    /// # let t = parse(Format::OpenAi, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    /// assert_eq!(t.incoming(0).unwrap().returncode(), None);
    /// ```
    pub fn returncode(&self) -> Option<i64> {
        if !self.inner.is_result {
            return None;
        }
        let text = self.text();
        let start = text.find("<returncode>")? + "<returncode>".len();
        let end = text[start..].find("</returncode>")? + start;
        text[start..end].trim().parse().ok()
    }
}
