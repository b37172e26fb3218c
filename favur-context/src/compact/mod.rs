//! Compaction: the policy, the pure planner, the summarizers (the only effect), and the
//! compactor that turns a plan and its summaries into a recorded compaction.

mod compact_async;
mod compactor;
#[cfg(feature = "llm")]
pub(crate) mod llm;
pub(crate) mod plan;
pub(crate) mod policy;
pub(crate) mod prepared;
mod report;
pub(crate) mod summarize;
mod summary_inputs;

pub use compactor::*;
pub use report::{CommitError, CompactionReport, Fallback, LimitExceeded};
