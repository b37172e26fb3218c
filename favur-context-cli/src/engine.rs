//! The library's compaction engine and renderers, adapted to the replay's traits.

use favur_context::compact::BuiltinSummarizer;
use favur_context::{Compactor, History, Policy};
use serde_json::Value;

use crate::ReplayError;
use crate::replay::Renderer;
use crate::strategy::{Before, Event, Strategy};

/// The policy under test: the library's [`Compactor`] with the built-in summarizer,
/// compacting before each request exactly as an agent loop calling `prepare` would.
#[derive(Debug, Clone)]
pub struct PolicyStrategy {
    compactor: Compactor<BuiltinSummarizer>,
}

impl PolicyStrategy {
    /// The engine with `policy` and `summarizer`.
    ///
    /// See [`PolicyStrategy`] for an example.
    pub fn new(policy: Policy, summarizer: BuiltinSummarizer) -> Self {
        PolicyStrategy {
            compactor: Compactor::with_summarizer(policy, summarizer),
        }
    }
}

impl Strategy for PolicyStrategy {
    fn label(&self) -> String {
        let p = self.compactor.policy();
        let mut label = "policy".to_owned();
        if p.keep_recent() > 0 {
            label.push_str(&format!(" (keep_recent {})", p.keep_recent()));
        }
        // The summarizer is named only where it differs from the default.
        let names = self.compactor.summarizer().max_identifiers;
        if names != BuiltinSummarizer::default().max_identifiers {
            if names == 0 {
                label.push_str(" (no identifier list)");
            } else {
                label.push_str(&format!(" (identifier list {names})"));
            }
        }
        label
    }

    fn before_request(&mut self, history: &mut History) -> Result<Before, ReplayError> {
        let event = self.compactor.compact(history)?.map(|r| Event {
            tier: Some(r.tier),
            summarizer_calls: u32::try_from(r.summarizer_calls).unwrap_or(u32::MAX),
            fallbacks: u32::try_from(r.fallbacks.len()).unwrap_or(u32::MAX),
        });
        let refused = history.usage_tokens() >= self.compactor.policy().limit_tokens();
        Ok(Before { event, refused })
    }

    fn thresholds(&self) -> Vec<f64> {
        let p = self.compactor.policy();
        let mut t: Vec<f64> = p.tiers().iter().map(|t| t.at).collect();
        t.push(p.limit());
        t
    }
}

/// Which request format the replay renders.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RequestFormat {
    /// OpenAI Chat Completions `messages`.
    #[default]
    #[value(name = "openai")]
    OpenAi,
    /// Anthropic Messages (`system` and `messages`).
    #[value(name = "anthropic")]
    Anthropic,
    /// Anthropic Messages with `cache_control` breakpoints where the prefix is stable
    /// (`render_anthropic_cached`).
    #[value(name = "anthropic-cached")]
    AnthropicCached,
    /// OpenAI Responses (`input` items).
    #[value(name = "responses")]
    Responses,
    /// Gemini `generateContent` (`systemInstruction` and `contents`).
    #[value(name = "gemini")]
    Gemini,
}

/// The library's renderer for a [`RequestFormat`].
#[derive(Debug, Clone, Copy, Default)]
pub struct LibRenderer(pub RequestFormat);

impl Renderer for LibRenderer {
    fn render(&self, history: &History) -> Result<Value, ReplayError> {
        Ok(match self.0 {
            RequestFormat::OpenAi => favur_context::render::render_openai(history),
            RequestFormat::Anthropic => favur_context::render::render_anthropic(history).to_value(),
            RequestFormat::AnthropicCached => {
                favur_context::render::render_anthropic_cached(history)
                    .0
                    .to_value()
            }
            RequestFormat::Responses => favur_context::render::render_responses(history),
            RequestFormat::Gemini => favur_context::render::render_gemini(history),
        })
    }
}

#[cfg(test)]
mod tests;
