//! Attaching a file to the message being written: read and its text taken out off the async
//! threads (`hearth_attach`), its content stored once (by hash) and a document indexed for
//! retrieval (its progress told as it goes) before the message is sent, so sending names only
//! what is stored.

use std::path::PathBuf;

use hearth_attach::{AttachError, Limits};
use hearth_core::Attachment;
use hearth_store::{Store, StoreError, StoredContent};
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

/// Reads the file at `path` and stores its content; returns what the message will carry.
pub async fn attach_file(store: &Store, path: PathBuf, limits: Limits, progress: OnProgress) -> Result<Attachment, AttachFailure> {
    keep(store, move || hearth_attach::read_file(&path, &limits), progress).await
}

/// Reads a file's bytes (pasted, so with no path) named `name` and stores its content.
pub async fn attach_bytes(
    store: &Store,
    name: String,
    data: Vec<u8>,
    limits: Limits,
    progress: OnProgress,
) -> Result<Attachment, AttachFailure> {
    keep(store, move || hearth_attach::read_bytes(name, data, &limits), progress).await
}

/// Reads a file off the async threads with `read` and stores what it holds, telling `progress`
/// how much of a long document is indexed.
async fn keep(
    store: &Store,
    read: impl FnOnce() -> Result<hearth_attach::ReadFile, AttachError> + Send + 'static,
    progress: OnProgress,
) -> Result<Attachment, AttachFailure> {
    let read = tokio::task::spawn_blocking(read)
        .await
        .map_err(|e| AttachError::Io { name: "the file".into(), source: std::io::Error::other(e) })??;
    let content = StoredContent { kind: read.attachment.kind, data: read.data, text: read.text };
    store.keep_attachment_telling(&read.attachment.hash, &content, &|indexed| progress(AttachProgress { indexed })).await?;
    tracing::info!(bytes = read.attachment.bytes, chars = read.attachment.chars, "a file was attached");
    Ok(read.attachment)
}
