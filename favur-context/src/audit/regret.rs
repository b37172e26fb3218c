//! Regret events: an entry that left the view and was needed again.

use std::fmt;
use std::num::NonZeroU8;

use serde::Serialize;
use serde_json::Value;

use crate::model::entry::EntryId;
use crate::model::message::Arguments;
use crate::model::retention::Retention;
use crate::model::site::CallSite;

/// The `tracing` target every regret event is emitted on.
pub const REGRET_TARGET: &str = "favur_context::regret";

/// Where an entry stands in the view, as far as the ledger has seen.
///
/// ```
/// use std::num::NonZeroU8;
/// use favur_context::audit::Fate;
/// assert!(Fate::Kept.in_view());
/// assert!(!Fate::Dropped { tier: NonZeroU8::new(2).unwrap() }.in_view());
/// assert_eq!(Fate::Summarized { tier: NonZeroU8::MIN }.tier(), Some(NonZeroU8::MIN));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "fate")]
pub enum Fate {
    /// Still in the view with its content (verbatim, capped, or its calls only).
    Kept,
    /// Its content was replaced by a summary (or by a placeholder pointing at one).
    Summarized {
        /// The tier that summarized it.
        tier: NonZeroU8,
    },
    /// Its content left the view without a summary (dropped, or a bare placeholder).
    Dropped {
        /// The tier that dropped it.
        tier: NonZeroU8,
    },
}

impl Fate {
    /// Whether its content is still in the view.
    ///
    /// See [`Fate`] for an example.
    pub fn in_view(self) -> bool {
        matches!(self, Fate::Kept)
    }

    /// The tier that took its content out of the view, if it left.
    ///
    /// See [`Fate`] for an example.
    pub fn tier(self) -> Option<NonZeroU8> {
        match self {
            Fate::Kept => None,
            Fate::Summarized { tier } | Fate::Dropped { tier } => Some(tier),
        }
    }
}

impl fmt::Display for Fate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fate::Kept => f.write_str("kept"),
            Fate::Summarized { tier } => write!(f, "summarized at tier {tier}"),
            Fate::Dropped { tier } => write!(f, "dropped at tier {tier}"),
        }
    }
}

/// What made an entry's eviction a regret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum RegretKind {
    /// The model called the recall tool for it after it left the view.
    Recall,
    /// The same tool was called with the same arguments (for shell tools: the same
    /// command) after the earlier result left the view.
    RepeatedCall {
        /// The tool's name.
        tool: String,
        /// The call as compared: see [`call_key`].
        call: String,
    },
    /// A later assistant message used identifiers that, at the time, were only in this
    /// entry, which had left the view (measured by a replay).
    LostReference {
        /// The identifiers.
        identifiers: Vec<String>,
    },
}

impl RegretKind {
    /// A short name: `recall`, `repeated call` or `lost reference`.
    ///
    /// See [`RegretKind`] for an example.
    pub fn label(&self) -> &'static str {
        match self {
            RegretKind::Recall => "recall",
            RegretKind::RepeatedCall { .. } => "repeated call",
            RegretKind::LostReference { .. } => "lost reference",
        }
    }
}

/// One regret: an entry left the view and was needed again. Names the site that
/// classified the evicted entry, its class, the tier that evicted it, and what getting it
/// back cost.
///
/// ```
/// use favur_context::audit::{Fate, RegretEvent, RegretKind};
/// use favur_context::message::CallSite;
/// use favur_context::{EntryId, Retention};
/// let e = RegretEvent {
///     kind: RegretKind::Recall,
///     evicted: EntryId(3),
///     site: CallSite::new("src/agent.rs", 40, 9),
///     class: Retention::Forgettable,
///     fate: Fate::Dropped { tier: std::num::NonZeroU8::new(2).unwrap() },
///     cost_tokens: 120,
///     at: EntryId(9),
/// };
/// assert_eq!(e.to_string(), "recall of #3 (forgettable, from src/agent.rs:40:9, dropped at tier 2) at #9 cost 120 tokens");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegretEvent {
    /// Why it is a regret.
    #[serde(flatten)]
    pub kind: RegretKind,
    /// The entry that had left the view.
    pub evicted: EntryId,
    /// The call site that classified it.
    pub site: CallSite,
    /// Its class.
    pub class: Retention,
    /// What had happened to it (the tier that took it out of the view).
    pub fate: Fate,
    /// Tokens the re-fetch cost: the recalled or repeated result; for a lost reference,
    /// the evicted entry's own tokens (what running its tool again would add).
    pub cost_tokens: u64,
    /// The entry that re-fetched it (the recall or repeated result; for a lost
    /// reference, the assistant message that needed it).
    pub at: EntryId,
}

impl fmt::Display for RegretEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} ({}, from {}, {})",
            self.kind.label(),
            self.evicted,
            self.class,
            self.site,
            self.fate
        )?;
        match &self.kind {
            RegretKind::Recall => {}
            RegretKind::RepeatedCall { call, .. } => write!(f, " `{call}`")?,
            RegretKind::LostReference { identifiers } => {
                write!(f, " [{}]", identifiers.join(", "))?
            }
        }
        write!(f, " at {} cost {} tokens", self.at, self.cost_tokens)
    }
}

impl RegretEvent {
    /// Emits the event on [`REGRET_TARGET`] at `WARN` level, with the site, class, tier
    /// and cost as fields.
    pub(crate) fn emit(&self) {
        // An event's entry has left the view, so it always has a tier.
        let tier = self.fate.tier().map(NonZeroU8::get);
        tracing::warn!(
            target: "favur_context::regret",
            kind = self.kind.label(),
            site = %self.site,
            class = self.class.as_str(),
            tier,
            evicted = self.evicted.0,
            at = self.at.0,
            cost_tokens = self.cost_tokens,
            "{self}"
        );
    }
}

/// The form in which two calls are compared for [`RegretKind::RepeatedCall`]: for a shell
/// tool (arguments with a string `command` or `cmd`) the tool name and the command with
/// its whitespace collapsed; otherwise the tool name and the arguments as JSON with
/// object keys sorted (so key order does not matter); invalid JSON as it was, trimmed.
///
/// ```
/// use favur_context::audit::call_key;
/// use favur_context::message::Arguments;
/// use serde_json::json;
/// let a = call_key("bash", &Arguments::from(json!({"command": "ls  -la src", "timeout": 5})));
/// let b = call_key("bash", &Arguments::from(json!({"command": "ls -la src"})));
/// assert_eq!(a, b);
/// assert_eq!(a, "bash: ls -la src");
/// let c = call_key("read", &Arguments::from(json!({"path": "a.rs", "line": 3})));
/// let d = call_key("read", &Arguments::parse(r#"{"line": 3, "path": "a.rs"}"#));
/// assert_eq!(c, d);
/// ```
pub fn call_key(tool: &str, arguments: &Arguments) -> String {
    match arguments {
        Arguments::Json(v) => {
            let command = v
                .get("command")
                .or_else(|| v.get("cmd"))
                .and_then(Value::as_str);
            match command {
                Some(c) => format!(
                    "{tool}: {}",
                    c.split_whitespace().collect::<Vec<_>>().join(" ")
                ),
                None => {
                    let mut out = format!("{tool} ");
                    canonical(v, &mut out);
                    out
                }
            }
        }
        Arguments::Invalid(raw) => format!("{tool} {}", raw.trim()),
    }
}

/// JSON text with object keys sorted, recursively.
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}
