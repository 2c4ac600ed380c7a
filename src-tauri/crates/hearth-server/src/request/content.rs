//! A message's `content` as OpenAI spells it: a string, or parts — `text`, and `image_url` with
//! the image in a data URL (`data:image/png;base64,…`) for a vision model. Remote image URLs are
//! refused: the server fetches nothing on a client's behalf.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;

use hearth_core::ImageInput;

use crate::error::ApiError;

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Debug, Deserialize)]
pub struct Part {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    image_url: Option<ImageUrl>,
}

/// `{"url": …, "detail": …}`, or the URL alone as some clients send it.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ImageUrl {
    Object { url: String },
    Url(String),
}

/// The most images one request shows a model.
const MAX_IMAGES: usize = 16;

/// The text of `content` and the images its parts carry (only a user's may); `param` names the
/// field at fault.
pub fn read(content: Option<&Content>, user: bool, param: &str) -> Result<(String, Vec<ImageInput>), ApiError> {
    let parts = match content {
        None => return Ok((String::new(), Vec::new())),
        Some(Content::Text(text)) => return Ok((text.clone(), Vec::new())),
        Some(Content::Parts(parts)) => parts,
    };
    let (mut text, mut images) = (String::new(), Vec::new());
    for (index, part) in parts.iter().enumerate() {
        let at = format!("{param}[{index}]");
        match (part.kind.as_str(), &part.text, &part.image_url) {
            ("text", Some(t), _) => text.push_str(t),
            ("image_url", _, Some(url)) if user => images.push(image(url, &at)?),
            ("image_url", _, Some(_)) => return Err(ApiError::invalid(Some(&at), "only a user's message shows the model images")),
            ("image_url", _, None) => return Err(ApiError::invalid(Some(&at), "an `image_url` part needs its `image_url.url`")),
            (kind, _, _) => {
                return Err(ApiError::invalid(Some(&at), format!("a `{kind}` part cannot be read: send `text` or `image_url`")));
            }
        }
    }
    if images.len() > MAX_IMAGES {
        return Err(ApiError::invalid(Some(param), format!("a message shows at most {MAX_IMAGES} images, not {}", images.len())));
    }
    Ok((text, images))
}

/// The image a data URL holds.
fn image(url: &ImageUrl, at: &str) -> Result<ImageInput, ApiError> {
    let (ImageUrl::Object { url } | ImageUrl::Url(url)) = url;
    let at = format!("{at}.image_url.url");
    let Some(rest) = url.strip_prefix("data:") else {
        return Err(ApiError::invalid(
            Some(&at),
            "Hearth's server fetches no images from the web: send the image itself as a data URL (data:image/png;base64,…)",
        ));
    };
    let Some((media, data)) = rest.split_once(";base64,") else {
        return Err(ApiError::invalid(Some(&at), "a data URL's image must be base64 (data:image/png;base64,…)"));
    };
    if !media.starts_with("image/") {
        return Err(ApiError::invalid(Some(&at), format!("`{media}` is not an image type")));
    }
    let bytes =
        STANDARD.decode(data.trim()).map_err(|e| ApiError::invalid(Some(&at), format!("the image's base64 cannot be read: {e}")))?;
    Ok(ImageInput::new(bytes))
}
