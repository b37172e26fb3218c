//! The image media types each provider documents as supported, for the renderers (an
//! image of another type is sent as a visible text note, as the Anthropic renderer does
//! with [`IMAGE_MEDIA_TYPES`](super::IMAGE_MEDIA_TYPES)) and the validators (an image of
//! another type is [`Rule::BadMediaType`](super::Rule::BadMediaType)).

/// The image media types the OpenAI formats (Chat Completions, Responses) accept: PNG,
/// JPEG, WEBP and GIF (OpenAI's vision guide: "non-animated GIF"; whether a GIF is
/// animated is not checked here).
pub const OPENAI_IMAGE_MEDIA_TYPES: [&str; 4] =
    ["image/png", "image/jpeg", "image/webp", "image/gif"];

/// The image media types Gemini accepts (Gemini's image understanding guide): PNG, JPEG,
/// WEBP, HEIC and HEIF.
pub const GEMINI_IMAGE_MEDIA_TYPES: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/webp",
    "image/heic",
    "image/heif",
];

/// The media type of a `data:` URL (`data:image/png;base64,...` gives `image/png`).
fn data_url_type(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("data:")?;
    let end = rest.find([';', ','])?;
    rest.get(..end)
}

/// `Err(BadMediaType)` for a base64 image `data:` URL whose type the OpenAI formats do
/// not accept; `Ok` for any other URL.
pub(crate) fn openai_image_url(url: &str) -> Result<(), super::Rule> {
    match data_url_type(url) {
        Some(t) if !OPENAI_IMAGE_MEDIA_TYPES.contains(&t) => Err(super::Rule::BadMediaType {
            media_type: t.to_owned(),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_type_of_a_data_url_is_read_up_to_its_parameters() {
        assert_eq!(data_url_type("data:image/png;base64,AA"), Some("image/png"));
        assert_eq!(data_url_type("data:image/bmp,AA"), Some("image/bmp"));
        assert_eq!(data_url_type("https://x/a.png"), None);
        assert_eq!(data_url_type("data:nothing"), None);
        assert!(openai_image_url("data:image/bmp;base64,AA").is_err());
        assert!(openai_image_url("data:image/gif;base64,AA").is_ok());
        assert!(openai_image_url("https://x/a.bmp").is_ok());
    }
}
