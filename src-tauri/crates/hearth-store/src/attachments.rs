//! Attached files' contents, stored once each (by the SHA-256 of their bytes) and referred to by
//! the messages that carry them (`messages.attachments`).

use std::time::Duration;

use hearth_core::AttachmentKind;

use crate::passages::Indexed;
use crate::store::now_ms;
use crate::{Store, StoreError};

/// How long a content no message refers to is kept: one attached while a message is written
/// (not yet sent) must survive a restart in between.
pub const UNSENT_KEPT: Duration = Duration::from_secs(24 * 3600);

/// An attached file's content as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredContent {
    pub kind: AttachmentKind,
    /// The file as attached.
    pub data: Vec<u8>,
    /// What a model reads of it.
    pub text: String,
}

/// What [`Store::attached_image`] found under a hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttachedImage {
    Bytes(Vec<u8>),
    /// Larger than asked for: not read.
    TooLarge,
    /// A document is stored there.
    NotAnImage,
}

impl Store {
    /// Keeps a file's content under `hash` (the SHA-256 of `data`, lowercase hex), a document
    /// cut into passages for retrieval; a content stored before is kept as it was.
    pub async fn keep_attachment(&self, hash: &str, content: &StoredContent) -> Result<(), StoreError> {
        self.keep_attachment_telling(hash, content, &|_| {}).await
    }

    /// As [`Store::keep_attachment`], telling `indexed` how much of a long document is indexed as
    /// it goes (a batch of passages at a time).
    pub async fn keep_attachment_telling(&self, hash: &str, content: &StoredContent, indexed: Indexed<'_>) -> Result<(), StoreError> {
        let kind = kind_name(content.kind);
        let added = sqlx::query(
            "INSERT INTO attachments (hash, kind, data, text, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING",
        )
        .bind(hash)
        .bind(kind)
        .bind(&content.data)
        .bind(&content.text)
        .bind(now_ms())
        .execute(self.pool())
        .await?;
        if added.rows_affected() == 1 && content.kind == AttachmentKind::Document {
            self.index_document(hash, &content.text, indexed).await?;
        }
        Ok(())
    }

    /// The content stored under `hash`, if any.
    pub async fn attachment(&self, hash: &str) -> Result<Option<StoredContent>, StoreError> {
        let row: Option<(String, Vec<u8>, String)> =
            sqlx::query_as("SELECT kind, data, text FROM attachments WHERE hash = ?").bind(hash).fetch_optional(self.pool()).await?;
        Ok(row.map(|(kind, data, text)| StoredContent { kind: kind_of(&kind), data, text }))
    }

    /// The bytes of the image stored under `hash`, for its chip's thumbnail: none when nothing
    /// is stored there, a document is, or the image is larger than `max_bytes` (its bytes are then
    /// not read).
    pub async fn attached_image(&self, hash: &str, max_bytes: u64) -> Result<Option<AttachedImage>, StoreError> {
        let row: Option<(String, Option<Vec<u8>>)> =
            sqlx::query_as("SELECT kind, CASE WHEN length(data) <= ? THEN data END FROM attachments WHERE hash = ?")
                .bind(max_bytes as i64)
                .bind(hash)
                .fetch_optional(self.pool())
                .await?;
        Ok(match row {
            None => None,
            Some((kind, _)) if kind_of(&kind) != AttachmentKind::Image => Some(AttachedImage::NotAnImage),
            Some((_, None)) => Some(AttachedImage::TooLarge),
            Some((_, Some(data))) => Some(AttachedImage::Bytes(data)),
        })
    }

    /// Removes the contents no message refers to that were stored more than `age` ago (at open,
    /// `UNSENT_KEPT`); returns how many.
    pub async fn forget_unused_attachments(&self, age: Duration) -> Result<u64, StoreError> {
        let before = now_ms() - age.as_millis() as i64;
        let done = sqlx::query(
            "DELETE FROM attachments WHERE created_at <= ? AND hash NOT IN (
                 SELECT json_extract(file.value, '$.hash') FROM messages, json_each(messages.attachments) AS file
                 WHERE messages.attachments IS NOT NULL)",
        )
        .bind(before)
        .execute(self.pool())
        .await?;
        if done.rows_affected() > 0 {
            sqlx::query("DELETE FROM passages WHERE document NOT IN (SELECT hash FROM attachments)").execute(self.pool()).await?;
            sqlx::query("DELETE FROM passage_meanings WHERE document NOT IN (SELECT hash FROM attachments)").execute(self.pool()).await?;
            self.meanings.forget(None);
        }
        Ok(done.rows_affected())
    }
}

pub(crate) fn kind_name(kind: AttachmentKind) -> &'static str {
    match kind {
        AttachmentKind::Document => "document",
        AttachmentKind::Image => "image",
    }
}

pub(crate) fn kind_of(name: &str) -> AttachmentKind {
    if name == "image" { AttachmentKind::Image } else { AttachmentKind::Document }
}
