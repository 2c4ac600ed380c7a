//! A PDF's text layer through lopdf, page by page, each page's streams bounded in what they
//! inflate to. A page that cannot be read is skipped and said; a PDF with none readable, or
//! encrypted with a password, is refused.

use crate::{AttachError, Limits};

pub fn text(name: &str, data: &[u8], limits: &Limits) -> Result<String, AttachError> {
    let damaged = |reason: String| AttachError::Damaged { name: name.into(), reason };
    let encrypted = || AttachError::Encrypted { name: name.into() };
    // An owner password alone (printing, copying restricted) opens with the empty user password.
    let document = match lopdf::Document::load_mem_with_options(data, lopdf::LoadOptions::with_password("")) {
        Ok(document) => document,
        Err(lopdf::Error::Decryption(_) | lopdf::Error::InvalidPassword) => return Err(encrypted()),
        Err(e) => return Err(damaged(e.to_string())),
    };
    let pages: Vec<u32> = document.get_pages().into_keys().collect();
    if pages.is_empty() {
        return Err(damaged("it has no pages".into()));
    }
    let mut text = String::new();
    let mut unread = 0;
    for page in &pages {
        match document.extract_text_with_limit(&[*page], limits.max_unpacked_bytes as usize) {
            Ok(page_text) => {
                text += page_text.trim_end();
                text += "\n\n";
            }
            Err(lopdf::Error::Decompress(_)) => return Err(AttachError::Bomb { name: name.into(), limit: limits.max_unpacked_bytes }),
            Err(lopdf::Error::Decryption(_)) => return Err(encrypted()),
            Err(_) => unread += 1,
        }
    }
    if unread == pages.len() {
        return Err(damaged(format!("none of its {} pages could be read", pages.len())));
    }
    if unread > 0 {
        text += &format!("[{unread} of {} pages could not be read]", pages.len());
    }
    Ok(text)
}
