//! Attaching a file to the message being written: read and its text taken out off the async
//! threads (`hearth_attach`), its content stored once (by hash) and a document indexed for
//! retrieval (its progress told as it goes) before the message is sent, so sending names only
//! what is stored.

use std::path::PathBuf;

use hearth_attach::{AttachError, Limits};
use hearth_core::{Attachment, AttachmentKind, Embedder, embed_passages};
use hearth_store::{AttachedImage, Store, StoreError, StoredContent};
use serde::Serialize;
use ts_rs::TS;

/// How far a long document being attached is indexed for retrieval, told after each batch of
/// its passages: the window shows it on the file's chip.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AttachProgress {
    /// The share of its text indexed, 0 to 1.
    pub indexed: f64,
}

/// The share of a document's indexing told for its words when its passages are embedded too.
const WORDS_SHARE: f64 = 0.2;

/// Told each [`AttachProgress`] of a file being attached.
pub type OnProgress = Box<dyn Fn(AttachProgress) + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum AttachFailure {
    /// The file: its words name it and say why.
    #[error(transparent)]
    File(#[from] AttachError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Reads the file at `path` and stores its content (a document's passages given their vectors
/// by `embedder`'s model, if one is chosen); returns what the message will carry.
pub async fn attach_file(
    store: &Store,
    embedder: &dyn Embedder,
    path: PathBuf,
    limits: Limits,
    progress: OnProgress,
) -> Result<Attachment, AttachFailure> {
    keep(store, embedder, move || hearth_attach::read_file(&path, &limits), progress).await
}

/// Reads a file's bytes (pasted, so with no path) named `name` and stores its content.
pub async fn attach_bytes(
    store: &Store,
    embedder: &dyn Embedder,
    (name, data): (String, Vec<u8>),
    limits: Limits,
    progress: OnProgress,
) -> Result<Attachment, AttachFailure> {
    keep(store, embedder, move || hearth_attach::read_bytes(name, data, &limits), progress).await
}

/// Reads a file off the async threads with `read` and stores what it holds, telling `progress`
/// how much of a long document is indexed.
async fn keep(
    store: &Store,
    embedder: &dyn Embedder,
    read: impl FnOnce() -> Result<hearth_attach::ReadFile, AttachError> + Send + 'static,
    progress: OnProgress,
) -> Result<Attachment, AttachFailure> {
    let read = tokio::task::spawn_blocking(read)
        .await
        .map_err(|e| AttachError::Io { name: "the file".into(), source: std::io::Error::other(e) })??;
    let content = StoredContent { kind: read.attachment.kind, data: read.data, text: read.text };
    let hash = &read.attachment.hash;
    let by_meaning = content.kind == AttachmentKind::Document && embedder.model().is_some();
    // Words index fast, meaning slowly: with a model the share told is a fifth words.
    let words = if by_meaning { WORDS_SHARE } else { 1.0 };
    store.keep_attachment_telling(hash, &content, &|indexed| progress(AttachProgress { indexed: indexed * words })).await?;
    if by_meaning {
        let told = |done: f64| progress(AttachProgress { indexed: words + (1.0 - words) * done });
        if let Err(e) = embed_passages(store, embedder, &[hash], &told).await {
            // Its passages are embedded when first asked about, or ranked by words alone.
            tracing::warn!(error = %e, "a document's passages were not embedded");
        }
    }
    tracing::info!(bytes = read.attachment.bytes, chars = read.attachment.chars, "a file was attached");
    Ok(read.attachment)
}

/// The largest image whose bytes go to the window for a sent message's thumbnail (the window
/// decodes the whole image to draw it): a larger one's chip keeps its icon.
pub const PREVIEW_MAX_BYTES: u64 = 16 << 20;

#[derive(Debug, thiserror::Error)]
pub enum PreviewError {
    #[error("{0} is not an attached file's hash")]
    NotAHash(String),
    #[error("no attached file is stored under {0}; it was let go of, or never attached")]
    Unknown(String),
    #[error("the file stored under {0} is a document, not an image")]
    NotAnImage(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The bytes of the image attached under `hash`, for the window to draw its thumbnail on a sent
/// message's chip; none when it is larger than [`PREVIEW_MAX_BYTES`].
pub async fn image_preview(store: &Store, hash: &str) -> Result<Option<Vec<u8>>, PreviewError> {
    if !Attachment::is_hash(hash) {
        return Err(PreviewError::NotAHash(hash.into()));
    }
    match store.attached_image(hash, PREVIEW_MAX_BYTES).await? {
        None => Err(PreviewError::Unknown(hash.into())),
        Some(AttachedImage::NotAnImage) => Err(PreviewError::NotAnImage(hash.into())),
        Some(AttachedImage::TooLarge) => Ok(None),
        Some(AttachedImage::Bytes(bytes)) => Ok(Some(bytes)),
    }
}
