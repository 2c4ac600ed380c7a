//! Full-text search results.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{ChatId, MessageId, Role};

/// One message that matches a search, with the matching words marked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    #[ts(type = "number")]
    pub chat_id: ChatId,
    pub chat_title: String,
    #[ts(type = "number")]
    pub message_id: MessageId,
    pub role: Role,
    /// A window of the message's text around the match.
    pub snippet: Vec<SnippetPart>,
    #[ts(type = "number")]
    pub created_at: i64,
}

/// A run of snippet text; `hit` marks the words that matched. Plain text, never markup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SnippetPart {
    pub text: String,
    pub hit: bool,
}
