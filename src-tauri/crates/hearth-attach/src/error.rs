//! Why a file cannot be attached, in words a user can act on.

/// Why a file cannot be attached. Each names the file.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error("{name} could not be read: {source}")]
    Io {
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{name} is not a file")]
    NotAFile { name: String },
    #[error("{name} is {} MB; files up to {} MB can be attached ({LIMITS_SET})", mb(*bytes), mb(*limit))]
    TooLarge { name: String, bytes: u64, limit: u64 },
    #[error("{name} holds {chars} characters of text; up to {limit} can be attached")]
    TooMuchText { name: String, chars: u64, limit: u64 },
    #[error("{name} unpacks to more than {} MB; it may be a zip bomb, and is not read", mb(*limit))]
    Bomb { name: String, limit: u64 },
    #[error("{name} looks like a binary file, not text")]
    Binary { name: String },
    #[error("{name} has no text to read (a scanned PDF has only images: run it through OCR first)")]
    NoText { name: String },
    #[error("{name} is encrypted with a password; save a copy without one and attach that")]
    Encrypted { name: String },
    #[error("{name} is damaged and cannot be read: {reason}")]
    Damaged { name: String, reason: String },
    #[error("{name} is not an image that can be read (damaged, or cut short)")]
    ImageUnreadable { name: String },
    #[error("{name} is {width} × {height} pixels; images up to {} megapixels can be attached — scale it down first ({LIMITS_SET})", limit / 1_000_000)]
    ImageTooLarge { name: String, width: u64, height: u64, limit: u64 },
    #[error("{name} is a WebP image, which models cannot read yet: save it as PNG or JPEG and attach that")]
    WebP { name: String },
    #[error("{name} is a model, not a document: import it in Models → Library to chat with it")]
    Model { name: String },
    #[error("{name} is {what}; attach the documents inside it instead")]
    Unsupported { name: String, what: String },
}

/// Where the user changes the limits.
const LIMITS_SET: &str = "the limit is set in Settings → Sampling & model → Attachments";

fn mb(bytes: u64) -> String {
    let mb = bytes as f64 / (1 << 20) as f64;
    if mb < 10.0 { format!("{mb:.1}") } else { format!("{mb:.0}") }
}
