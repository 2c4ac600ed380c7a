//! Files attached to a chat message: read within limits, the text a model reads taken out of
//! them — plain text and source code as written, HTML's text, a DOCX's paragraphs, a PDF's text
//! layer — and the hash they are stored under. A file that cannot be read is refused in words
//! (`AttachError`); nothing here panics on what a file holds.

mod docx;
mod error;
mod html;
mod pdf;
mod text;

use std::io::Read;
use std::path::Path;

use hearth_core::{Attachment, AttachmentKind, AttachmentLimits};
use sha2::{Digest, Sha256};

pub use error::AttachError;

/// How much one attachment may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest file read.
    pub max_file_bytes: u64,
    /// The most a file's compressed parts (a DOCX's XML, a PDF page's streams) inflate to.
    pub max_unpacked_bytes: u64,
    /// The most text kept of one file.
    pub max_text_chars: u64,
    /// The largest image, in pixels.
    pub max_image_pixels: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits::from(AttachmentLimits::default())
    }
}

/// Floors of the limits that follow the largest file: what a 64 MB file may unpack to and hold.
const MIN_UNPACKED_BYTES: u64 = 256 << 20;
const MIN_TEXT_CHARS: u64 = 16 << 20;

impl From<AttachmentLimits> for Limits {
    /// The user's limits; what a file may unpack to and the text kept of it follow the largest
    /// file (a plain text file holds about as many characters as bytes).
    fn from(limits: AttachmentLimits) -> Self {
        let file = limits.max_file_bytes();
        Limits {
            max_file_bytes: file,
            max_unpacked_bytes: MIN_UNPACKED_BYTES.max(4 * file),
            max_text_chars: MIN_TEXT_CHARS.max(file),
            max_image_pixels: limits.max_image_pixels(),
        }
    }
}

/// A file read and its text taken out, ready to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadFile {
    pub attachment: Attachment,
    /// The file's bytes.
    pub data: Vec<u8>,
    /// What a model reads of it.
    pub text: String,
}

/// Reads the file at `path` as an attachment.
pub fn read_file(path: &Path, limits: &Limits) -> Result<ReadFile, AttachError> {
    let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    // A model dropped on the chat is not read (it may be gigabytes).
    if name.to_ascii_lowercase().ends_with(".gguf") {
        return Err(AttachError::Model { name });
    }
    let io = |source| AttachError::Io { name: name.clone(), source };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(AttachError::NotAFile { name });
    }
    if meta.len() > limits.max_file_bytes {
        return Err(AttachError::TooLarge { name, bytes: meta.len(), limit: limits.max_file_bytes });
    }
    let mut data = Vec::with_capacity(meta.len() as usize);
    // The file may grow between the two reads.
    std::fs::File::open(path).map_err(io)?.take(limits.max_file_bytes + 1).read_to_end(&mut data).map_err(io)?;
    if data.len() as u64 > limits.max_file_bytes {
        return Err(AttachError::TooLarge { name, bytes: data.len() as u64, limit: limits.max_file_bytes });
    }
    read_bytes(name, data, limits)
}

/// Reads a file's bytes (a paste, a drop) named `name` as an attachment.
pub fn read_bytes(name: String, data: Vec<u8>, limits: &Limits) -> Result<ReadFile, AttachError> {
    if data.len() as u64 > limits.max_file_bytes {
        return Err(AttachError::TooLarge { name, bytes: data.len() as u64, limit: limits.max_file_bytes });
    }
    let text = match Format::of(&name, &data) {
        Format::Pdf => pdf::text(&name, &data, limits)?,
        Format::Docx => docx::text(&name, &data, limits)?,
        Format::Html => html::text(&text::decode(&name, &data)?),
        Format::Text => text::decode(&name, &data)?,
        Format::Image => return read_image(name, data, limits.max_image_pixels),
        Format::WebP => return Err(AttachError::WebP { name }),
        Format::Archive => return Err(AttachError::Unsupported { name, what: "an archive".into() }),
    };
    let text = text::tidy(&text);
    if text.trim().is_empty() {
        return Err(AttachError::NoText { name });
    }
    let chars = text.chars().count() as u64;
    if chars > limits.max_text_chars {
        return Err(AttachError::TooMuchText { name, chars, limit: limits.max_text_chars });
    }
    let attachment = Attachment { hash: hash_of(&data), name, kind: AttachmentKind::Document, bytes: data.len() as u64, chars };
    Ok(ReadFile { attachment, data, text })
}

/// An image for a vision model: kept as it is (the model's projector decodes and scales it),
/// once its header says it is an image of a size that can be decoded.
fn read_image(name: String, data: Vec<u8>, max_pixels: u64) -> Result<ReadFile, AttachError> {
    let size = imagesize::blob_size(&data).map_err(|_| AttachError::ImageUnreadable { name: name.clone() })?;
    let (width, height) = (size.width as u64, size.height as u64);
    if width * height > max_pixels {
        return Err(AttachError::ImageTooLarge { name, width, height, limit: max_pixels });
    }
    if width == 0 || height == 0 {
        return Err(AttachError::ImageUnreadable { name });
    }
    let attachment = Attachment { hash: hash_of(&data), name, kind: AttachmentKind::Image, bytes: data.len() as u64, chars: 0 };
    Ok(ReadFile { attachment, data, text: String::new() })
}

fn hash_of(data: &[u8]) -> String {
    Sha256::digest(data).iter().map(|b| format!("{b:02x}")).collect()
}

/// How a file is read: by what its first bytes say, then by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Pdf,
    Docx,
    Html,
    Text,
    /// PNG, JPEG, GIF (its first frame), BMP: what the engine's image reader takes.
    Image,
    WebP,
    /// A zip that is not a DOCX.
    Archive,
}

impl Format {
    fn of(name: &str, data: &[u8]) -> Format {
        let extension = name.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase()).unwrap_or_default();
        let image = [&b"\x89PNG"[..], b"\xFF\xD8\xFF", b"GIF87a", b"GIF89a"].iter().any(|magic| data.starts_with(magic))
            || (extension == "bmp" && data.starts_with(b"BM"));
        if data.len() >= 12 && &data[..4] == b"RIFF" && &data[8..12] == b"WEBP" {
            Format::WebP
        } else if data.starts_with(b"%PDF-") {
            Format::Pdf
        } else if data.starts_with(b"PK\x03\x04") {
            if extension == "docx" { Format::Docx } else { Format::Archive }
        } else if image {
            Format::Image
        } else if matches!(extension.as_str(), "html" | "htm" | "xhtml") {
            Format::Html
        } else {
            Format::Text
        }
    }
}
