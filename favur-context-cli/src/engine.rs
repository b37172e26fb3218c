//! The library's compaction engine and renderer, adapted to the replay's traits.

use crate::ReplayError;
use crate::cli::PolicyFactory;
use crate::replay::Renderer;
use crate::wiring::CliError;

/// The policy under test, built from a policy file or `default`.
pub(crate) fn policy_factory(
    _policy: &str,
    _window: u64,
) -> Result<Box<PolicyFactory<'static>>, CliError> {
    Err(CliError::Policy(
        "the compaction engine is not available in this build".to_owned(),
    ))
}

/// The request renderer.
pub(crate) struct LibRenderer;

impl Renderer for LibRenderer {
    fn render(&self, _history: &favur_context::History) -> Result<serde_json::Value, ReplayError> {
        Err(ReplayError::Render(
            "the renderer is not available in this build".to_owned(),
        ))
    }
}

pub(crate) fn renderer() -> LibRenderer {
    LibRenderer
}
