//! Database rows and their conversion to domain types.

use hearth_core::{ChatSummary, MessageStatus, ReplyStats, Role, StoredMessage};

use crate::StoreError;

#[derive(sqlx::FromRow)]
pub struct ChatRow {
    pub id: i64,
    pub title: String,
    pub updated_at: i64,
}

impl From<ChatRow> for ChatSummary {
    fn from(r: ChatRow) -> Self {
        ChatSummary { id: r.id, title: r.title, updated_at: r.updated_at }
    }
}

#[derive(sqlx::FromRow)]
pub struct MessageRow {
    pub id: i64,
    pub chat_id: i64,
    pub role: String,
    pub content: String,
    pub status: String,
    pub model: Option<String>,
    pub stats: Option<String>,
    pub created_at: i64,
}

pub const MESSAGE_COLUMNS: &str = "id, chat_id, role, content, status, model, stats, created_at";

impl TryFrom<MessageRow> for StoredMessage {
    type Error = StoreError;

    fn try_from(r: MessageRow) -> Result<Self, StoreError> {
        let invalid = |what: &str| StoreError::InvalidRow(format!("message {}: {what}", r.id));
        let role = Role::parse(&r.role).ok_or_else(|| invalid("unknown role"))?;
        let status = MessageStatus::parse(&r.status).ok_or_else(|| invalid("unknown status"))?;
        let stats = match &r.stats {
            Some(json) => Some(
                serde_json::from_str::<ReplyStats>(json).map_err(|_| invalid("unreadable stats"))?,
            ),
            None => None,
        };
        Ok(StoredMessage {
            id: r.id,
            chat_id: r.chat_id,
            role,
            content: r.content,
            status,
            created_at: r.created_at,
            model: r.model,
            stats,
        })
    }
}
