//! Whether a part read back from outside is well-formed ([`check_part`]), and which parts
//! are of the newer kinds (reasoning, image, document).

use super::message::Part;
use super::parts::{MediaSource, Provider};

/// Why a reasoning or media part read back from outside is not well-formed.
///
/// ```
/// use favur_context::message::{Media, PartError, Part};
/// let bad = Part::Image(Box::new(Media::base64("", "AAAA")));
/// assert_eq!(favur_context::message::check_part(&bad), Err(PartError::EmptyMediaType));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PartError {
    /// An image or document has an empty media type.
    #[error("an image or document has an empty media type")]
    EmptyMediaType,
    /// An image or document has an empty source (no data, URL or file id).
    #[error("an image or document has an empty {0} source")]
    EmptySource(&'static str),
    /// A reasoning part has nothing in it (no text, signature or payload).
    #[error("a {provider} reasoning part has no text, signature or encrypted payload")]
    EmptyReasoning {
        /// Its provider.
        provider: Provider,
    },
}

/// Checks that a part's media or reasoning is well-formed (other parts are always
/// well-formed here): what a record read back from outside must pass.
///
/// ```
/// use favur_context::message::{Part, Provider, Reasoning};
/// assert!(favur_context::message::check_part(&Part::Text(String::new())).is_ok());
/// assert!(favur_context::message::check_part(&Part::from(Reasoning::new(Provider::OpenAi))).is_err());
/// ```
pub fn check_part(part: &Part) -> Result<(), PartError> {
    match part {
        Part::Image(m) | Part::Document(m) => {
            if m.media_type.trim().is_empty() {
                return Err(PartError::EmptyMediaType);
            }
            let (kind, s) = match &m.source {
                MediaSource::Base64 { data } => ("base64", data),
                MediaSource::Url { url } => ("url", url),
                MediaSource::File { file_id } => ("file", file_id),
            };
            if s.is_empty() {
                return Err(PartError::EmptySource(kind));
            }
            Ok(())
        }
        Part::Reasoning(r) => {
            let empty = r.text.iter().all(String::is_empty)
                && r.signature.as_deref().is_none_or(str::is_empty)
                && r.encrypted.as_deref().is_none_or(str::is_empty)
                && r.id.as_deref().is_none_or(str::is_empty);
            if empty {
                return Err(PartError::EmptyReasoning {
                    provider: r.provider,
                });
            }
            Ok(())
        }
        Part::Text(_) | Part::ToolCall(_) | Part::ToolResult(_) => Ok(()),
    }
}

/// Whether `part` is one of the kinds `model::parts` adds (reasoning, image, document).
pub(crate) fn is_new_kind(part: &Part) -> bool {
    matches!(
        part,
        Part::Reasoning(_) | Part::Image(_) | Part::Document(_)
    )
}
