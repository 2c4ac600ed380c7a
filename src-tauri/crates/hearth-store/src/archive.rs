//! The JSON export format and its import. An archive is lossless: every branch with its
//! statuses, stats, times and models, each chat's title, pin, system prompt and own sampling
//! settings. Ids inside an archive are the message's place in its chat (1, 2, …), so exporting
//! what was imported gives the same archive.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use hearth_core::{
    Attachment, AttachmentKind, ChatId, ChatSummary, ImportReport, MessageStatus, ModelTarget, Passage, ReplyStats, Role, SamplingParams,
    SettingsScope, SkippedChat, ToolRun,
};

use crate::rows::{CHAT_COLUMNS, ChatRow};
use crate::{Store, StoreError};

/// Names the format, so a stray JSON file is refused in words.
pub const FORMAT: &str = "hearth-chats";
/// Bumped when a change would make older Hearths misread an archive.
pub const VERSION: u32 = 3;
// 2: tool messages (`role: "tool"` with their `tool` record).
// 3: attached files (`attachments` on messages, their contents in the chat's `files`).

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Archive {
    pub format: String,
    pub version: u32,
    /// Unix milliseconds.
    pub exported_at: i64,
    pub chats: Vec<ArchivedChat>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchivedChat {
    pub title: String,
    /// "user" when the user named the chat; automatic titles never replace those.
    pub title_source: String,
    pub pinned: bool,
    pub system_prompt: String,
    /// Where the chat's next reply comes from (a provider by id; never its key).
    #[serde(default)]
    pub model: ModelTarget,
    pub created_at: i64,
    pub updated_at: i64,
    /// The message whose branch is on show.
    pub current_leaf: Option<u32>,
    /// The chat's own sampling settings, if it has any.
    pub settings: Option<Value>,
    /// Parents before children.
    pub messages: Vec<ArchivedMessage>,
    /// The contents of the files its messages carry, by hash.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, ArchivedFile>,
}

/// An attached file's content in an archive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchivedFile {
    pub kind: AttachmentKind,
    /// The file's bytes, in base64.
    pub data: String,
    /// What a model reads of it.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchivedMessage {
    pub id: u32,
    pub parent: Option<u32>,
    pub role: Role,
    pub content: String,
    pub status: MessageStatus,
    pub model: Option<String>,
    pub stats: Option<ReplyStats>,
    pub created_at: i64,
    pub updated_at: i64,
    /// A tool message's record of its call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolRun>,
    /// A user message's files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    /// The passages of its files a user message was given in their place.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passages: Vec<Passage>,
}

/// The whole file could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("this file is not a Hearth chat export: {0}")]
    NotAnArchive(String),
    #[error("this export was made by a newer Hearth (format version {0}); update Hearth to import it")]
    NewerVersion(u32),
    #[error(transparent)]
    Store(#[from] StoreError),
}

from_row! {
    struct ChatExportRow {
        id: i64,
        title: String,
        title_source: String,
        pinned: bool,
        system_prompt: String,
        model_target: Option<String>,
        created_at: i64,
        updated_at: i64,
        current_leaf_id: Option<i64>,
    }
}

from_row! {
    struct MessageExportRow {
        id: i64,
        parent_id: Option<i64>,
        role: String,
        content: String,
        status: String,
        model: Option<String>,
        stats: Option<String>,
        created_at: i64,
        updated_at: i64,
        tool: Option<String>,
        attachments: Option<String>,
        passages: Option<String>,
    }
}

impl Store {
    /// The chats `ids` (all chats when `None`), oldest first: importing them in that order gives
    /// them ids in the same order, so chats last active at the same moment still list alike.
    pub async fn export(&self, ids: Option<&[ChatId]>) -> Result<Archive, StoreError> {
        let rows: Vec<ChatExportRow> = sqlx::query_as(
            "SELECT id, title, title_source, pinned, system_prompt, model_target, created_at, updated_at, current_leaf_id
             FROM chats ORDER BY id",
        )
        .fetch_all(self.pool())
        .await?;
        if let Some(ids) = ids
            && let Some(missing) = ids.iter().find(|id| !rows.iter().any(|r| r.id == **id))
        {
            return Err(StoreError::ChatNotFound(*missing));
        }
        let mut chats = Vec::new();
        for row in rows.into_iter().filter(|r| ids.is_none_or(|ids| ids.contains(&r.id))) {
            chats.push(self.export_chat(row).await?);
        }
        Ok(Archive { format: FORMAT.into(), version: VERSION, exported_at: crate::store::now_ms(), chats })
    }

    async fn export_chat(&self, chat: ChatExportRow) -> Result<ArchivedChat, StoreError> {
        let rows: Vec<MessageExportRow> = sqlx::query_as(
            "SELECT id, parent_id, role, content, status, model, stats, created_at, updated_at, tool, attachments, passages
             FROM messages WHERE chat_id = ? ORDER BY id",
        )
        .bind(chat.id)
        .fetch_all(self.pool())
        .await?;
        // Archive ids are places in the chat; a parent always has a smaller id than its children.
        let place: HashMap<i64, u32> = rows.iter().enumerate().map(|(i, r)| (r.id, i as u32 + 1)).collect();
        let invalid = |id: i64, what: &str| StoreError::InvalidRow(format!("message {id}: {what}"));
        let messages = rows
            .into_iter()
            .map(|r| {
                let tool: Option<ToolRun> =
                    r.tool.as_deref().map(serde_json::from_str).transpose().map_err(|_| invalid(r.id, "unreadable tool record"))?;
                let role = match Role::parse(&r.role).ok_or_else(|| invalid(r.id, "unknown role"))? {
                    Role::User if tool.is_some() => Role::Tool,
                    role => role,
                };
                let attachments: Vec<Attachment> =
                    json_list(r.attachments.as_deref()).ok_or_else(|| invalid(r.id, "unreadable attachments"))?;
                let passages: Vec<Passage> = json_list(r.passages.as_deref()).ok_or_else(|| invalid(r.id, "unreadable passages"))?;
                Ok(ArchivedMessage {
                    id: place[&r.id],
                    attachments,
                    passages,
                    parent: r
                        .parent_id
                        .map(|p| place.get(&p).copied().ok_or_else(|| invalid(r.id, "parent in another chat")))
                        .transpose()?,
                    role,
                    tool,
                    status: MessageStatus::parse(&r.status).ok_or_else(|| invalid(r.id, "unknown status"))?,
                    stats: r.stats.map(|json| serde_json::from_str(&json)).transpose().map_err(|_| invalid(r.id, "unreadable stats"))?,
                    content: r.content,
                    model: r.model,
                    created_at: r.created_at,
                    updated_at: r.updated_at,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let settings = self.setting(&SettingsScope::Chat { id: chat.id }.key()).await?;
        let mut files = BTreeMap::new();
        for attachment in messages.iter().flat_map(|m| &m.attachments) {
            if !files.contains_key(&attachment.hash)
                && let Some(content) = self.attachment(&attachment.hash).await?
            {
                let file = ArchivedFile { kind: content.kind, data: BASE64.encode(&content.data), text: content.text };
                files.insert(attachment.hash.clone(), file);
            }
        }
        Ok(ArchivedChat {
            files,
            title: chat.title,
            title_source: chat.title_source,
            pinned: chat.pinned,
            system_prompt: chat.system_prompt,
            model: crate::rows::parse_target(chat.model_target.as_deref()),
            created_at: chat.created_at,
            updated_at: chat.updated_at,
            current_leaf: chat.current_leaf_id.and_then(|id| place.get(&id).copied()),
            // Kept as saved: an export must not drop what this version would not write.
            settings: settings.and_then(|json| serde_json::from_str(&json).ok()),
            messages,
        })
    }

    /// Imports every valid chat of an archive, each in one transaction, as new chats. A file is
    /// data, not instructions: a model file it names (the chat's model, a draft model) is kept
    /// only where `in_library` knows it as one of this machine's models; others are dropped,
    /// with a note, so an archive cannot make Hearth load a path of its choosing.
    pub async fn import(&self, json: &str, in_library: impl Fn(&Path) -> bool) -> Result<ImportReport, ImportError> {
        let chats = parse(json)?;
        let mut report = ImportReport::default();
        for (place, chat) in chats.into_iter().enumerate() {
            let name = chat
                .get("title")
                .and_then(Value::as_str)
                .filter(|t| !t.trim().is_empty())
                .map_or_else(|| format!("chat {}", place + 1), str::to_owned);
            let mut chat =
                match serde_json::from_value::<ArchivedChat>(chat).map_err(|e| e.to_string()).and_then(|c| validate(&c).map(|()| c)) {
                    Ok(chat) => chat,
                    Err(reason) => {
                        report.skipped.push(SkippedChat { chat: name, reason });
                        continue;
                    }
                };
            for note in forget_foreign_models(&mut chat, &in_library) {
                report.notes.push(format!("{name}: {note}"));
            }
            let settings = match chat.settings.as_ref().map(valid_settings).transpose() {
                Ok(settings) => settings,
                Err(reason) => {
                    report.notes.push(format!("{name}: its settings were left out ({reason})"));
                    None
                }
            };
            report.imported.push(self.insert_chat(&chat, settings.as_deref()).await?);
        }
        Ok(report)
    }

    async fn insert_chat(&self, chat: &ArchivedChat, settings: Option<&str>) -> Result<ChatSummary, StoreError> {
        let mut tx = self.write_transaction().await?;
        let title_source = if chat.title_source == "user" { "user" } else { "auto" };
        let id: ChatId = sqlx::query_scalar(
            "INSERT INTO chats (title, title_source, pinned, system_prompt, model_target, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(&chat.title)
        .bind(title_source)
        .bind(chat.pinned)
        .bind(&chat.system_prompt)
        .bind(crate::rows::target_json(&chat.model))
        .bind(chat.created_at)
        .bind(chat.updated_at)
        .fetch_one(&mut *tx)
        .await?;
        for (hash, file) in &chat.files {
            let data = BASE64.decode(&file.data).map_err(|e| StoreError::InvalidRow(e.to_string()))?;
            sqlx::query(
                "INSERT INTO attachments (hash, kind, data, text, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING",
            )
            .bind(hash)
            .bind(crate::attachments::kind_name(file.kind))
            .bind(data)
            .bind(&file.text)
            .bind(crate::store::now_ms())
            .execute(&mut *tx)
            .await?;
        }
        let mut new_ids: HashMap<u32, i64> = HashMap::new();
        for m in &chat.messages {
            // A reply that was streaming when exported cannot be streaming here.
            let status = if m.status == MessageStatus::Streaming { MessageStatus::Interrupted } else { m.status };
            let stats = m.stats.as_ref().map(serde_json::to_string).transpose().map_err(|e| StoreError::InvalidRow(e.to_string()))?;
            let new_id: i64 = sqlx::query_scalar(
                "INSERT INTO messages (chat_id, parent_id, role, content, status, model, stats, created_at, updated_at, tool, attachments, passages)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            )
            .bind(id)
            .bind(m.parent.map(|p| new_ids[&p]))
            // A tool's result is kept as the user's turn, its record beside it (see rows.rs).
            .bind(if m.role == Role::Tool { Role::User.as_str() } else { m.role.as_str() })
            .bind(&m.content)
            .bind(status.as_str())
            .bind(&m.model)
            .bind(stats)
            .bind(m.created_at)
            .bind(m.updated_at)
            .bind(m.tool.as_ref().map(|t| serde_json::to_string(t).expect("tool record serializes")))
            .bind((!m.attachments.is_empty()).then(|| serde_json::to_string(&m.attachments).expect("attachments serialize")))
            .bind((!m.passages.is_empty()).then(|| serde_json::to_string(&m.passages).expect("passages serialize")))
            .fetch_one(&mut *tx)
            .await?;
            new_ids.insert(m.id, new_id);
        }
        let row: ChatRow = sqlx::query_as(&format!("UPDATE chats SET current_leaf_id = ? WHERE id = ? RETURNING {CHAT_COLUMNS}"))
            .bind(chat.current_leaf.map(|leaf| new_ids[&leaf]))
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
        if let Some(settings) = settings {
            sqlx::query("INSERT INTO settings (key, value) VALUES (?, ?)")
                .bind(SettingsScope::Chat { id }.key())
                .bind(settings)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(row.into())
    }
}

/// The archive's chats, each still to be read: one chat that does not parse is skipped, not the file.
fn parse(json: &str) -> Result<Vec<Value>, ImportError> {
    #[derive(Deserialize)]
    struct Envelope {
        format: String,
        version: u32,
        chats: Vec<Value>,
    }
    let not_archive = |e: serde_json::Error| ImportError::NotAnArchive(e.to_string());
    let envelope: Envelope = serde_json::from_str(json).map_err(not_archive)?;
    if envelope.format != FORMAT {
        return Err(ImportError::NotAnArchive(format!("its format is {:?}, not {FORMAT:?}", envelope.format)));
    }
    if envelope.version > VERSION {
        return Err(ImportError::NewerVersion(envelope.version));
    }
    Ok(envelope.chats)
}

/// Why a chat cannot be imported as it is, if it cannot.
fn validate(chat: &ArchivedChat) -> Result<(), String> {
    let mut seen = HashSet::new();
    for m in &chat.messages {
        if let Some(parent) = m.parent
            && !seen.contains(&parent)
        {
            return Err(format!("message {} follows message {parent}, which does not come before it", m.id));
        }
        if !seen.insert(m.id) {
            return Err(format!("two messages have the id {}", m.id));
        }
        if (m.role == Role::Tool) != m.tool.is_some() {
            return Err(format!("message {} is a tool's result without its record, or a record without a tool's result", m.id));
        }
        if let Some(file) = m.attachments.iter().find(|a| !chat.files.contains_key(&a.hash)) {
            return Err(format!("message {} carries {}, whose content is not in the file", m.id, file.name));
        }
    }
    // A content is stored under its hash and shared by every message that carries the same file:
    // one that is not what its hash says would stand in for that file in other chats.
    for (hash, file) in &chat.files {
        let data = BASE64.decode(&file.data).map_err(|_| format!("the content of attached file {hash} is not base64"))?;
        if !Attachment::is_hash(hash) || hex_sha256(&data) != *hash {
            return Err(format!("the content of attached file {hash} is not what its hash says"));
        }
    }
    if let Some(leaf) = chat.current_leaf
        && !seen.contains(&leaf)
    {
        return Err(format!("the message on show ({leaf}) is not in the chat"));
    }
    Ok(())
}

/// The chat's settings as they will be saved, if this version can use them.
/// Drops the model files `chat` names that are not in this machine's library; says which.
fn forget_foreign_models(chat: &mut ArchivedChat, in_library: &impl Fn(&Path) -> bool) -> Vec<String> {
    let mut notes = Vec::new();
    if let ModelTarget::Local { model: Some(path) } = &chat.model
        && !in_library(Path::new(path))
    {
        notes.push(format!("its model {path} is not in this machine's library; the chat uses the loaded model"));
        chat.model = ModelTarget::LOADED;
    }
    if let Some(settings) = chat.settings.as_mut().and_then(Value::as_object_mut)
        && let Some(Value::String(path)) = settings.get("draftModel")
        && !in_library(Path::new(path))
    {
        notes.push(format!("its draft model {path} is not in this machine's library; speculative decoding with it is off"));
        settings.insert("draftModel".into(), Value::Null);
        if settings.get("speculative").and_then(Value::as_str) == Some("draftModel") {
            settings.insert("speculative".into(), Value::String("off".into()));
        }
    }
    notes
}

fn valid_settings(value: &Value) -> Result<String, String> {
    let params: SamplingParams = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    params.validate().map_err(|e| e.to_string())?;
    Ok(value.to_string())
}

/// A content's name in the store: its SHA-256, lowercase hex.
pub fn hex_sha256(data: &[u8]) -> String {
    Sha256::digest(data).iter().map(|b| format!("{b:02x}")).collect()
}

/// A JSON list column: empty when NULL, `None` when unreadable.
fn json_list<T: serde::de::DeserializeOwned>(json: Option<&str>) -> Option<Vec<T>> {
    json.map_or(Some(Vec::new()), |json| serde_json::from_str(json).ok())
}
