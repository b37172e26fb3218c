//! Who classified this, and were they right: a per-call-site [`Ledger`] of a history and
//! the [`RegretEvent`]s it detects as they happen.
//!
//! Every entry records the [`CallSite`](crate::message::CallSite) that classified it. The ledger
//! groups a history's entries by that site (and class) and tells, for each site, what it
//! appended, what is still in the view, what each entry became (kept, summarized or
//! dropped, by tier), and how often an entry it classified was needed again after it had
//! left the view: a *regret*. A site with many regrets is a site whose class is too mild.
//!
//! ```
//! use favur_context::audit::{Ledger, RegretKind};
//! use favur_context::compact::{Compaction, Edit};
//! use favur_context::tools::RecallTool;
//! use favur_context::{forgettable, strict, History, Retention, ToolCall};
//! use serde_json::json;
//!
//! let mut history = History::new();
//! let mut ledger = Ledger::new();
//! let line = line!() + 1;
//! let trace = history.append(forgettable!(tool_error("c1"): "thread 'main' panicked at src/lib.rs:3:5"));
//! ledger.observe(&history);
//! history.apply(Compaction { tier: std::num::NonZeroU8::new(2).unwrap(), edits: vec![Edit::Drop { id: trace }], usage_after: None }).unwrap();
//! ledger.observe(&history);
//!
//! // The model asks for the trace back: a regret, charged to the `forgettable!` line.
//! let call = ToolCall::new("c2", RecallTool.name(), json!({ "id": trace.0 }));
//! history.append(strict!(tool_calls: [("c2", "recall", json!({ "id": trace.0 }))]));
//! let answer = RecallTool.respond(&history, &call, Retention::Forgettable);
//! history.append(answer);
//! let found = ledger.observe(&history);
//! assert_eq!(found.len(), 1);
//! assert_eq!(found[0].kind, RegretKind::Recall);
//! assert_eq!(found[0].site.line(), line);
//! assert_eq!(found[0].class, Retention::Forgettable);
//! ```
//!
//! The `favur-context audit` command prints this ledger for journals, saved histories and
//! replayed transcripts; see `docs/audit.md`.

mod ledger;
mod order;
mod regret;
mod site_stats;
mod timeline;

pub use ledger::Ledger;
pub use regret::{Fate, REGRET_TARGET, RegretEvent, RegretKind, call_key};
pub use site_stats::{SiteStats, site_key, sort_sites};
pub use timeline::{Band, CompactionMark, RequestPoint, Timeline};
