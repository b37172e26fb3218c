//! The one way in: [`NewEntry`], a classified value to record, appended or pinned.

use crate::model::classify::{Classified, Classify};
use crate::model::entry::EntryKind;
use crate::model::message::ToolCall;
use crate::model::site::CallSite;
use crate::model::tool::ClassifiedTool;

/// One entry to record: a classified value, appended or pinned. The only way in, so an
/// unclassified value cannot reach a store.
///
/// ```
/// use favur_context::store::NewEntry;
/// use favur_context::{strict, Retention};
/// let e = NewEntry::pinned(strict!(system: "You are a coding agent."));
/// assert!(e.is_pinned());
/// assert_eq!(e.classified().retention(), Retention::Strict);
/// ```
///
/// ```compile_fail
/// let e = favur_context::store::NewEntry::appended("unclassified"); // error: `&str` has no retention class
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct NewEntry {
    classified: Classified,
    pinned: bool,
    /// The idempotency key of the write this entry starts ([`Store::record_once`](crate::Store::record_once)).
    pub(crate) once: Option<Box<str>>,
}

impl NewEntry {
    /// An entry to append. The call site is the macro's, or this call's for a value
    /// classified by its type.
    #[track_caller]
    pub fn appended<M: Classify>(message: M) -> Self {
        NewEntry {
            classified: message.into_classified(CallSite::caller()),
            pinned: false,
            once: None,
        }
    }

    /// An entry to pin (see [`History::pin`](super::History::pin)).
    #[track_caller]
    pub fn pinned<M: Classify>(message: M) -> Self {
        NewEntry {
            classified: message.into_classified(CallSite::caller()),
            pinned: true,
            once: None,
        }
    }

    /// The result of `tool`'s call `call_id`, classified with the tool's class.
    #[track_caller]
    pub(crate) fn tool_result<T: ClassifiedTool + ?Sized>(
        _tool: &T,
        call_id: impl Into<String>,
        output: Result<String, String>,
    ) -> Self {
        NewEntry {
            classified: super::tool_result::<T>(call_id.into(), output, CallSite::caller()),
            pinned: false,
            once: None,
        }
    }

    /// Runs `tool` for `call`; its result, classified with the tool's class.
    #[track_caller]
    pub(crate) fn tool_run<T: ClassifiedTool + ?Sized>(tool: &T, call: &ToolCall) -> Self {
        let output = super::run(tool, call);
        let mut classified = super::tool_result::<T>(call.id.clone(), output, CallSite::caller());
        if let crate::model::message::Arguments::Json(args) = &call.arguments {
            classified = crate::model::tool::keyed(classified, tool.key(args), tool.key_part(args));
        }
        NewEntry {
            classified,
            pinned: false,
            once: None,
        }
    }

    /// The classified value.
    pub fn classified(&self) -> &Classified {
        &self.classified
    }

    /// Whether it is pinned.
    pub fn is_pinned(&self) -> bool {
        self.pinned
    }

    pub(crate) fn into_parts(self) -> (Classified, EntryKind) {
        let kind = if self.pinned {
            EntryKind::Pinned
        } else {
            EntryKind::Appended
        };
        (self.classified, kind)
    }
}
