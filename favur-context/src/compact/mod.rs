//! Compaction: the policy, the pure planner, the summarizers (the only effect), the
//! compactor that turns a plan and its summaries into a recorded compaction, and the
//! records and view that compactions leave ([`Compaction`], [`View`]).

mod compact_async;
pub(crate) mod compactor;
#[cfg(feature = "llm")]
pub(crate) mod llm;
pub(crate) mod plan;
pub(crate) mod policy;
pub(crate) mod prepared;
mod report;
pub(crate) mod summarize;
mod summary_inputs;

pub use crate::history::view::{ApplyError, Compaction, Edit, Summary, View, ViewItem};
pub use compactor::summary_message;
#[cfg(feature = "llm")]
pub use llm::{LlmConfig, LlmError, LlmSummarizer, cut_to_budget};
pub use plan::{ByClass, ClassOutcome, Figures, Plan, PlannedReform, Run};
pub use policy::{
    Action, DEFAULT_MIN_RECLAIM, DEFAULT_SUMMARY_BUDGET_TOKENS, DEFAULT_SUMMARY_TOKENS_PER_ENTRY,
    DEFAULT_TARGET, DEFAULT_WINDOW_TOKENS, PolicyBuilder, PolicyError, Tier,
};
pub use prepared::{PrepareError, Prepared};
pub use report::{CommitError, CompactionReport, Fallback, LimitExceeded};
pub use summarize::{
    AsyncSummarizer, BuiltinSummarizer, Ready, SummarizeError, Summarizer, SummaryRequest,
};
