use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{Attachment, ModelTarget, Passage, ReplyStats, ToolRun, WrittenCall};

pub type ChatId = i64;
pub type MessageId = i64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    /// A tool's result, read by the model in the user's turn (`tool_response`).
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        [Role::System, Role::User, Role::Assistant, Role::Tool].into_iter().find(|r| r.as_str() == s)
    }
}

/// Where a stored message is in its life. Only assistant replies are ever anything but `Complete`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum MessageStatus {
    /// Being written right now; text is flushed to disk as it streams.
    Streaming,
    Complete,
    /// The user pressed Stop; the text is what was generated until then.
    Stopped,
    /// The app died while this reply streamed; the text is what reached the disk.
    Interrupted,
    /// The backend failed; the text is what arrived before the failure.
    Failed,
}

impl MessageStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            MessageStatus::Streaming => "streaming",
            MessageStatus::Complete => "complete",
            MessageStatus::Stopped => "stopped",
            MessageStatus::Interrupted => "interrupted",
            MessageStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<MessageStatus> {
        use MessageStatus::*;
        [Streaming, Complete, Stopped, Interrupted, Failed].into_iter().find(|m| m.as_str() == s)
    }
}

/// One turn of a conversation as a backend sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
    /// A remote reply's signature over its reasoning (`ReplyStats::reasoning_signature`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_signature: Option<String>,
    /// Images a user message shows the model, read before its text (a vision model's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageInput>,
}

impl ChatMessage {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        ChatMessage { role, content: content.into(), reasoning_signature: None, images: Vec::new() }
    }
}

/// An image as a model is shown it: the file's bytes (PNG, JPEG, GIF, BMP), and their SHA-256
/// in hex — the same image is known as the same wherever it appears (its cached tokens too).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageInput {
    pub hash: String,
    #[serde(with = "base64_bytes")]
    pub bytes: Vec<u8>,
}

impl ImageInput {
    pub fn new(bytes: Vec<u8>) -> ImageInput {
        use sha2::{Digest, Sha256};
        let hash = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
        ImageInput { hash, bytes }
    }

    /// Its media type, by the format's signature (what a remote API is told it is).
    pub fn media_type(&self) -> &'static str {
        let b = self.bytes.as_slice();
        if b.starts_with(b"\x89PNG") {
            "image/png"
        } else if b.starts_with(b"\xFF\xD8\xFF") {
            "image/jpeg"
        } else if b.starts_with(b"GIF8") {
            "image/gif"
        } else if b.len() >= 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP" {
            "image/webp"
        } else if b.starts_with(b"BM") {
            "image/bmp"
        } else {
            "application/octet-stream"
        }
    }

    /// The image as a `data:` URL (OpenAI's `image_url`).
    pub fn data_url(&self) -> String {
        use base64::Engine as _;
        format!("data:{};base64,{}", self.media_type(), base64::engine::general_purpose::STANDARD.encode(&self.bytes))
    }
}

impl std::fmt::Debug for ImageInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageInput").field("hash", &self.hash).field("bytes", &self.bytes.len()).finish()
    }
}

/// Bytes as base64 in JSON (the engine's frames), a third larger rather than four times.
mod base64_bytes {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        STANDARD.decode(text).map_err(serde::de::Error::custom)
    }
}

/// The messages as a local model reads them: a tool's result in the user's turn, in a
/// `<tool_response>` block, as Hermes and Qwen's templates put it. (A remote provider is sent
/// tool messages as its API has them.)
pub fn read_tools_locally(messages: &mut [ChatMessage]) {
    for message in messages.iter_mut().filter(|m| m.role == Role::Tool) {
        *message = ChatMessage::new(Role::User, crate::tool_response(&message.content));
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ChatSummary {
    #[ts(type = "number")]
    pub id: ChatId,
    pub title: String,
    /// Unix milliseconds of the last message (or creation).
    #[ts(type = "number")]
    pub updated_at: i64,
    /// Pinned chats are listed first.
    pub pinned: bool,
    /// Sent to the model before the conversation; empty for none.
    pub system_prompt: String,
    /// Where the chat's next reply comes from.
    pub model: ModelTarget,
    /// What the local model file the chat names is called (`hearth_core::model_name`): null for
    /// a remote chat or one that names none (it talks to the loaded model).
    pub model_name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StoredMessage {
    #[ts(type = "number")]
    pub id: MessageId,
    #[ts(type = "number")]
    pub chat_id: ChatId,
    pub role: Role,
    pub content: String,
    pub status: MessageStatus,
    /// Unix milliseconds.
    #[ts(type = "number")]
    pub created_at: i64,
    /// The model that wrote an assistant reply.
    pub model: Option<String>,
    pub stats: Option<ReplyStats>,
    /// The message this one answers or follows; `None` for a chat's first message.
    #[ts(type = "number | null")]
    pub parent_id: Option<MessageId>,
    /// This message and its alternatives (edits, regenerations): the children of the same
    /// parent, oldest first. More than one means the UI offers "2/3" arrows.
    #[ts(type = "Array<number>")]
    pub siblings: Vec<MessageId>,
    /// A tool message's call: which tool ran, how, and how it went (its `content` is what the
    /// model read).
    #[serde(default)]
    pub tool: Option<ToolRun>,
    /// The calls an assistant reply wrote, read from its text (`read_calls`), in order.
    #[serde(default)]
    pub tool_calls: Vec<WrittenCall>,
    /// The files a user message carries, in the order attached (the model reads their text
    /// before the message's own).
    #[serde(default)]
    pub attachments: Vec<Attachment>,
    /// The passages of its documents a user message was given in their place (they did not fit
    /// the model's context whole): what the reply to it read, its sources.
    #[serde(default)]
    pub passages: Vec<Passage>,
}

impl StoredMessage {
    pub fn to_chat_message(&self) -> ChatMessage {
        let signature = self.stats.as_ref().and_then(|s| s.reasoning_signature.clone());
        ChatMessage { reasoning_signature: signature, ..ChatMessage::new(self.role, self.content.clone()) }
    }
}
