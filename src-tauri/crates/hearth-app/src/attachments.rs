//! Attaching a file to the message being written: read and its text taken out off the async
//! threads (`hearth_attach`), its content stored once (by hash) before the message is sent, so
//! sending names only what is stored.

use std::path::PathBuf;

use hearth_attach::{AttachError, Limits};
use hearth_core::Attachment;
use hearth_store::{Store, StoreError, StoredContent};

#[derive(Debug, thiserror::Error)]
pub enum AttachFailure {
    /// The file: its words name it and say why.
    #[error(transparent)]
    File(#[from] AttachError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Reads the file at `path` and stores its content; returns what the message will carry.
pub async fn attach_file(store: &Store, path: PathBuf, limits: Limits) -> Result<Attachment, AttachFailure> {
    keep(store, move || hearth_attach::read_file(&path, &limits)).await
}

/// Reads a file's bytes (pasted, so with no path) named `name` and stores its content.
pub async fn attach_bytes(store: &Store, name: String, data: Vec<u8>, limits: Limits) -> Result<Attachment, AttachFailure> {
    keep(store, move || hearth_attach::read_bytes(name, data, &limits)).await
}

/// Reads a file off the async threads with `read` and stores what it holds.
async fn keep(
    store: &Store,
    read: impl FnOnce() -> Result<hearth_attach::ReadFile, AttachError> + Send + 'static,
) -> Result<Attachment, AttachFailure> {
    let read = tokio::task::spawn_blocking(read)
        .await
        .map_err(|e| AttachError::Io { name: "the file".into(), source: std::io::Error::other(e) })??;
    let content = StoredContent { kind: read.attachment.kind, data: read.data, text: read.text };
    store.keep_attachment(&read.attachment.hash, &content).await?;
    tracing::info!(bytes = read.attachment.bytes, chars = read.attachment.chars, "a file was attached");
    Ok(read.attachment)
}
