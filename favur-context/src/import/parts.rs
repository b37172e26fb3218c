//! Reasoning and media read from transcripts: Anthropic `thinking`,
//! `redacted_thinking`, `image` and `document` blocks, and the `data:` URLs the OpenAI
//! formats carry media in, and Chat-style content lists ([`text_content`]). Every part
//! read is checked ([`check_part`]): a malformed one is an [`ImportError::Part`] naming
//! the message.

use serde_json::Value;

use super::{ImportError, bad};
use crate::model::message::Part;
use crate::model::part_check::check_part;
use crate::model::parts::{Media, MediaSource, Reasoning};

/// `part`, checked, or the error naming message `index`.
pub(super) fn checked(index: usize, part: Part) -> Result<Part, ImportError> {
    check_part(&part).map_err(|problem| ImportError::Part { index, problem })?;
    Ok(part)
}

fn str_of<'a>(b: &'a Value, key: &str) -> Option<&'a str> {
    b.get(key).and_then(Value::as_str)
}

/// A `thinking` or `redacted_thinking` block of message `index` (block `k`).
pub(super) fn anthropic_thinking(index: usize, k: usize, b: &Value) -> Result<Part, ImportError> {
    let r = if str_of(b, "type") == Some("redacted_thinking") {
        let data = str_of(b, "data").ok_or_else(|| {
            bad(
                index,
                format!("redacted_thinking block {k} has no `data` string"),
            )
        })?;
        Reasoning::anthropic_redacted(data)
    } else {
        let text = str_of(b, "thinking").ok_or_else(|| {
            bad(
                index,
                format!("thinking block {k} has no `thinking` string"),
            )
        })?;
        let signature = str_of(b, "signature").ok_or_else(|| {
            bad(
                index,
                format!("thinking block {k} has no `signature` string"),
            )
        })?;
        Reasoning::anthropic(text, signature)
    };
    checked(index, Part::Reasoning(Box::new(r)))
}

/// An Anthropic `image` or `document` block of message `index` (block `k`).
pub(super) fn anthropic_media(index: usize, k: usize, b: &Value) -> Result<Part, ImportError> {
    let kind = str_of(b, "type").unwrap_or_default();
    let source = b
        .get("source")
        .ok_or_else(|| bad(index, format!("{kind} block {k} has no `source`")))?;
    let field = |key: &str| {
        str_of(source, key).map(str::to_owned).ok_or_else(|| {
            bad(
                index,
                format!("{kind} block {k}: source has no `{key}` string"),
            )
        })
    };
    let media_type = |fallback: &str| {
        str_of(source, "media_type").map_or_else(|| fallback.to_owned(), str::to_owned)
    };
    let fallback = if kind == "image" {
        "image/*"
    } else {
        "application/pdf"
    };
    let mut media = match str_of(source, "type") {
        Some("base64") => Media {
            media_type: field("media_type")?,
            source: MediaSource::Base64 {
                data: field("data")?,
            },
            name: None,
        },
        Some("url") => Media::url(media_type(&guess(fallback, &field("url")?)), field("url")?),
        Some("file") => Media::file(media_type(fallback), field("file_id")?),
        Some(other) => {
            return Err(bad(
                index,
                format!("{kind} block {k}: source type `{other}` is not supported"),
            ));
        }
        None => {
            return Err(bad(
                index,
                format!("{kind} block {k}: source has no `type` (base64, url or file)"),
            ));
        }
    };
    media.name = str_of(b, "title").map(str::to_owned);
    checked(index, media_part(kind == "image", media))
}

fn media_part(image: bool, media: Media) -> Part {
    if image {
        Part::Image(Box::new(media))
    } else {
        Part::Document(Box::new(media))
    }
}

/// The media type a URL or file name's extension names, else `fallback`.
pub(super) fn guess(fallback: &str, name: &str) -> String {
    let ext = name
        .rsplit('/')
        .next()
        .and_then(|n| n.split(['?', '#']).next())
        .and_then(|n| n.rsplit_once('.'))
        .map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("pdf") => "application/pdf",
        Some("txt") => "text/plain",
        _ => fallback,
    }
    .to_owned()
}

/// Media as the OpenAI formats give it: a URL (`data:<type>;base64,<data>` or a plain
/// URL), else a provider file id; `None` when there is neither.
pub(super) fn openai_media(
    index: usize,
    image: bool,
    url: Option<&str>,
    file_id: Option<&str>,
    name: Option<&str>,
) -> Result<Option<Part>, ImportError> {
    let fallback = if image { "image/*" } else { "application/pdf" };
    let mut media = match (url, file_id) {
        (Some(url), _) => match url.strip_prefix("data:") {
            Some(rest) => {
                let (media_type, data) = rest.split_once(";base64,").ok_or_else(|| {
                    bad(
                        index,
                        "a data: URL must be base64 (`data:<type>;base64,...`)",
                    )
                })?;
                Media::base64(media_type, data)
            }
            None => Media::url(guess(fallback, name.unwrap_or(url)), url),
        },
        (None, Some(id)) => Media::file(guess(fallback, name.unwrap_or_default()), id),
        (None, None) => return Ok(None),
    };
    media.name = name.map(str::to_owned);
    checked(index, media_part(image, media)).map(Some)
}

/// Content given as a string, `null`/absent (no text), or an array of text parts
/// (`{"type": "text", "text": ...}`), `image_url` parts and `file` parts (as Chat
/// Completions sends them). Other part types are not supported.
pub(crate) fn text_content(
    index: usize,
    content: Option<&Value>,
) -> Result<Vec<Part>, ImportError> {
    match content {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![Part::Text(s.clone())]),
        Some(Value::Array(parts)) => parts
            .iter()
            .enumerate()
            .map(|(k, p)| match (p.get("type").and_then(Value::as_str), p.get("text")) {
                (Some("text"), Some(Value::String(t))) => Ok(Part::Text(t.clone())),
                (Some("text"), _) => Err(bad(index, format!("content part {k} has no `text` string"))),
                (Some("image_url"), _) => {
                    let url = p["image_url"]["url"].as_str();
                    openai_media(index, true, url, None, None)?
                        .ok_or_else(|| bad(index, format!("content part {k} has no `image_url.url`")))
                }
                (Some("file"), _) => {
                    let file = &p["file"];
                    let (data, id) = (file["file_data"].as_str(), file["file_id"].as_str());
                    openai_media(index, false, data, id, file["filename"].as_str())?
                        .ok_or_else(|| bad(index, format!("file part {k} has no source")))
                }
                (Some(other), _) => Err(bad(
                    index,
                    format!("content part {k} has type `{other}`, which is not supported (text, image_url, file)"),
                )),
                (None, _) => Err(bad(index, format!("content part {k} has no `type`"))),
            })
            .collect(),
        Some(_) => Err(bad(index, "`content` must be a string, null or an array of parts")),
    }
}
