//! Classification of parsed messages, one at a time: what a classifier sees of each (its
//! place among the messages before it) and the classified message it becomes.

use std::borrow::Cow;

use super::{
    Classifier, Decision, Format, ImportError, ImportReport, ImportedMessage, IncomingMessage,
    TranscriptMessage, Unclassified,
};
use crate::history::History;
use crate::model::classify::Classified;
use crate::model::message::Role;
use crate::model::site::CallSite;

/// Classifies messages in transcript order, keeping the classified ones and the reasons
/// of every one declined.
pub(crate) struct Classifying<'c, C: ?Sized> {
    format: Format,
    classifier: &'c C,
    /// The roles (as a classifier sees them) of the messages taken so far.
    seen: [bool; 4],
    out: Vec<ImportedMessage>,
    unclassified: Vec<(usize, String)>,
}

/// The role a classifier sees: results and observations are [`Role::Tool`].
pub(crate) fn seen_role(m: &TranscriptMessage) -> Role {
    if m.is_result {
        Role::Tool
    } else {
        m.message.role
    }
}

impl<'c, C: Classifier + ?Sized> Classifying<'c, C> {
    pub(crate) fn new(format: Format, classifier: &'c C, capacity: usize) -> Self {
        Classifying {
            format,
            classifier,
            seen: [false; 4],
            out: Vec::with_capacity(capacity),
            unclassified: Vec::new(),
        }
    }

    /// Classifies the next message; its message is moved (owned) or cloned (borrowed)
    /// into the classified one.
    pub(crate) fn take(&mut self, inner: Cow<'_, TranscriptMessage>) {
        let role = seen_role(&inner) as usize;
        let first = !self.seen[role];
        self.seen[role] = true;
        let incoming = IncomingMessage {
            format: self.format,
            inner: &inner,
            first,
        };
        match self.classifier.classify(&incoming) {
            Ok(decision) => {
                let site = site(self.format, &decision, &inner);
                let (index, pin, prompt_tokens) = (inner.index, inner.pin, inner.prompt_tokens);
                let message = match inner {
                    Cow::Borrowed(m) => m.message.clone(),
                    Cow::Owned(m) => m.message,
                };
                let mut classified = Classified::with_site(message, decision.class, site);
                if let Some(key) = decision.key {
                    classified = classified.with_key(key);
                    if let Some(part) = decision.key_part {
                        classified = classified.with_key_part(part);
                    }
                }
                self.out.push(ImportedMessage {
                    index,
                    pin: pin || decision.pin,
                    classified,
                    prompt_tokens,
                });
            }
            Err(Unclassified(reason)) => self.unclassified.push((inner.index, reason)),
        }
    }

    /// The classified messages, unless some were declined (every one is listed).
    pub(crate) fn finish(self) -> Result<Vec<ImportedMessage>, ImportError> {
        if self.unclassified.is_empty() {
            Ok(self.out)
        } else {
            Err(ImportError::Unclassified {
                unclassified: self.unclassified,
            })
        }
    }
}

/// The call site of a classified message: `import:<format>[/<rule>]`, line its index,
/// column its block (from 1).
fn site(format: Format, decision: &Decision, inner: &TranscriptMessage) -> CallSite {
    let file = match &decision.rule {
        Some(rule) => format!("import:{format}/{rule}"),
        None => format!("import:{format}"),
    };
    let line = u32::try_from(inner.index).unwrap_or(u32::MAX);
    let column = inner
        .block
        .and_then(|b| u32::try_from(b + 1).ok())
        .unwrap_or(1);
    CallSite::from_parts(file, line, column)
}

/// Records classified messages in `history` (pinning those marked so), in order.
pub(crate) fn record(
    history: &mut History,
    classified: Vec<ImportedMessage>,
    exit: Option<String>,
) -> ImportReport {
    let mut ids = Vec::with_capacity(classified.len());
    for m in classified {
        let id = if m.pin {
            history.pin(m.classified)
        } else {
            history.append(m.classified)
        };
        ids.push((m.index, id));
    }
    ImportReport { ids, exit }
}
