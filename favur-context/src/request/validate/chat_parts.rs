//! The OpenAI Chat Completions rules for content parts besides text: `image_url` parts
//! (an `image_url.url` that is an `http(s)` URL or a `data:image/...;base64,` URL of a
//! type in [`OPENAI_IMAGE_MEDIA_TYPES`](super::OPENAI_IMAGE_MEDIA_TYPES)) and
//! `file` parts (a `file.file_data` `data:` URL or a `file.file_id`) are allowed in user
//! messages only; the other roles carry text parts only.

use serde_json::Value;

use super::Rule;

/// Checks a content part of type `kind` in a message of `role`.
pub(super) fn check(kind: &str, part: &Value, role: &str) -> Result<(), Rule> {
    let not_allowed = || Rule::BlockNotAllowed {
        block: kind.to_owned(),
        role: role.to_owned(),
    };
    let field = |outer: &str, inner: &str| {
        part.get(outer)
            .and_then(|o| o.get(inner))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    match kind {
        "image_url" | "file" if role != "user" => Err(not_allowed()),
        "image_url" => match field("image_url", "url") {
            Some(url) if url.starts_with("data:image/") && url.contains(";base64,") => {
                super::media_types::openai_image_url(url)
            }
            Some(url) if url.starts_with("https://") || url.starts_with("http://") => Ok(()),
            Some(_) => Err(Rule::BadSource(
                "`image_url.url` must be an http(s) URL or a data:image/ URL".into(),
            )),
            None => Err(Rule::BadSource(
                "an image_url part needs `image_url.url`".into(),
            )),
        },
        "file" => match (field("file", "file_data"), field("file", "file_id")) {
            (Some(data), None) if data.starts_with("data:") && data.contains(";base64,") => Ok(()),
            (None, Some(_)) => Ok(()),
            _ => Err(Rule::BadSource(
                "a file part needs a `file.file_data` data: URL or a `file.file_id`".into(),
            )),
        },
        _ => Ok(()),
    }
}
