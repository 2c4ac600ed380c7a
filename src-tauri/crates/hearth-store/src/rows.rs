//! Database rows and their conversion to domain types.

use hearth_core::{Attachment, ChatSummary, MessageStatus, ModelTarget, Passage, ReplyStats, Role, StoredMessage, ToolRun, written_calls};

use crate::StoreError;

from_row! {
    pub struct ChatRow {
        pub id: i64,
        pub title: String,
        pub updated_at: i64,
        pub pinned: bool,
        pub system_prompt: String,
        pub model_target: Option<String>,
    }
}

pub const CHAT_COLUMNS: &str = "id, title, updated_at, pinned, system_prompt, model_target";

/// A chat's target as stored; a value another version wrote that no longer parses is the local
/// model (the user sees it and can switch back).
pub fn parse_target(json: Option<&str>) -> ModelTarget {
    json.and_then(|j| serde_json::from_str(j).ok()).unwrap_or_default()
}

pub fn target_json(target: &ModelTarget) -> Option<String> {
    (*target != ModelTarget::LOADED).then(|| serde_json::to_string(target).expect("ModelTarget serializes"))
}

impl From<ChatRow> for ChatSummary {
    fn from(r: ChatRow) -> Self {
        let model = parse_target(r.model_target.as_deref());
        ChatSummary {
            id: r.id,
            title: r.title,
            updated_at: r.updated_at,
            pinned: r.pinned,
            system_prompt: r.system_prompt,
            model_name: model.local_model_name(),
            model,
        }
    }
}

from_row! {
    pub struct MessageRow {
        pub id: i64,
        pub chat_id: i64,
        pub role: String,
        pub content: String,
        pub status: String,
        pub model: Option<String>,
        pub stats: Option<String>,
        pub created_at: i64,
        pub parent_id: Option<i64>,
        /// Comma-separated ids of the message and its siblings, in no order (an aggregate's ORDER BY
        /// needs SQLite 3.44; Debian 12 has 3.40).
        pub siblings: String,
        /// A tool message's record (JSON `ToolRun`); its role is stored as 'user'.
        pub tool: Option<String>,
        /// A user message's files (JSON `[Attachment]`).
        pub attachments: Option<String>,
        /// The passages a user message was given (JSON `[Passage]`).
        pub passages: Option<String>,
    }
}

/// A message row with its siblings, selected `FROM messages AS m`.
pub const MESSAGE_COLUMNS: &str =
    "m.id, m.chat_id, m.role, m.content, m.status, m.model, m.stats, m.created_at, m.parent_id, m.tool, m.attachments, m.passages,
    (SELECT group_concat(s.id, ',') FROM messages AS s
      WHERE s.chat_id = m.chat_id AND s.parent_id IS m.parent_id) AS siblings";

impl TryFrom<MessageRow> for StoredMessage {
    type Error = StoreError;

    fn try_from(r: MessageRow) -> Result<Self, StoreError> {
        let invalid = |what: &str| StoreError::InvalidRow(format!("message {}: {what}", r.id));
        let tool = match &r.tool {
            Some(json) => Some(serde_json::from_str::<ToolRun>(json).map_err(|_| invalid("unreadable tool record"))?),
            None => None,
        };
        let role = match Role::parse(&r.role).ok_or_else(|| invalid("unknown role"))? {
            Role::User if tool.is_some() => Role::Tool,
            role => role,
        };
        let tool_calls = written_calls(role, &r.content);
        let status = MessageStatus::parse(&r.status).ok_or_else(|| invalid("unknown status"))?;
        let stats = match &r.stats {
            Some(json) => Some(serde_json::from_str::<ReplyStats>(json).map_err(|_| invalid("unreadable stats"))?),
            None => None,
        };
        let attachments = match &r.attachments {
            Some(json) => serde_json::from_str::<Vec<Attachment>>(json).map_err(|_| invalid("unreadable attachments"))?,
            None => Vec::new(),
        };
        let passages = match &r.passages {
            Some(json) => serde_json::from_str::<Vec<Passage>>(json).map_err(|_| invalid("unreadable passages"))?,
            None => Vec::new(),
        };
        let siblings = r.siblings.split(',').map(str::parse).collect::<Result<Vec<i64>, _>>();
        let mut siblings = siblings.map_err(|_| invalid("unreadable siblings"))?;
        siblings.sort_unstable();
        Ok(StoredMessage {
            parent_id: r.parent_id,
            siblings,
            id: r.id,
            chat_id: r.chat_id,
            role,
            content: r.content,
            status,
            created_at: r.created_at,
            model: r.model,
            stats,
            tool,
            tool_calls,
            attachments,
            passages,
        })
    }
}
