//! A `HistoryStore` in memory: chats as trees of messages with a path on show, as the SQLite
//! store keeps them; every write recorded with its time; writes failed on demand.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hearth_core::{
    Attachment, ChatId, DocumentTexts, HistoryStore, ImageInput, Meaning, MessageId, MessageStatus, ModelTarget, Passage, PassageMeaning,
    ReplyStats, Role, StoredMessage, TokenProbs, ToolRun, closeness, fuse_rankings, passage_ranges,
};
use tokio::time::Instant;

/// Why a read or write failed: what a full disk says, or what was not found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreFault(pub String);

impl std::error::Error for StoreFault {}

impl std::fmt::Display for StoreFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A write the store took (or refused), and when.
#[derive(Debug, Clone, PartialEq)]
pub struct Write {
    pub at: Instant,
    pub message: MessageId,
    pub role: Role,
    pub content: String,
    pub status: MessageStatus,
    /// Refused: the store failed it.
    pub failed: bool,
}

#[derive(Default)]
struct Chats {
    messages: Vec<StoredMessage>,
    /// Each chat's last message on show.
    leaf: HashMap<ChatId, Option<MessageId>>,
    system: HashMap<ChatId, String>,
    tokens: HashMap<MessageId, Vec<TokenProbs>>,
    /// Attached documents' texts by hash.
    documents: DocumentTexts,
    /// Attached images' bytes by hash.
    images: std::collections::HashMap<String, Vec<u8>>,
    /// Passages' vectors: (document, ordinal, model) → vector.
    meanings: HashMap<(String, u32, String), Vec<f32>>,
    writes: Vec<Write>,
    /// The next this many writes fail; `u32::MAX`: every write (a full disk).
    failing: u32,
}

#[derive(Clone, Default)]
pub struct MemoryStore {
    chats: Arc<Mutex<Chats>>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps a document's text under `hash`, as attaching a file stores it.
    pub fn keep_document(&self, hash: &str, text: &str) {
        self.chats.lock().unwrap().documents.insert(hash.to_owned(), text.to_owned());
    }

    /// Keeps an image's bytes under `hash`, as attaching one stores it.
    pub fn keep_image(&self, hash: &str, bytes: &[u8]) {
        self.chats.lock().unwrap().images.insert(hash.to_owned(), bytes.to_vec());
    }

    /// A new empty chat.
    pub fn chat(&self, id: ChatId, system_prompt: &str) -> ChatId {
        let mut chats = self.chats.lock().unwrap();
        chats.leaf.insert(id, None);
        chats.system.insert(id, system_prompt.to_owned());
        id
    }

    /// The next `count` writes fail (`u32::MAX`: all of them, until [`MemoryStore::heal`]).
    pub fn fail_writes(&self, count: u32) {
        self.chats.lock().unwrap().failing = count;
    }

    pub fn heal(&self) {
        self.fail_writes(0);
    }

    /// Every write so far, in order.
    pub fn writes(&self) -> Vec<Write> {
        self.chats.lock().unwrap().writes.clone()
    }

    /// A message as kept now.
    pub fn get(&self, id: MessageId) -> Option<StoredMessage> {
        self.chats.lock().unwrap().messages.iter().find(|m| m.id == id).cloned()
    }

    /// The chat's path on show.
    pub fn path(&self, chat: ChatId) -> Vec<StoredMessage> {
        self.chats.lock().unwrap().path(chat)
    }
}

impl Chats {
    fn path(&self, chat: ChatId) -> Vec<StoredMessage> {
        let mut path = Vec::new();
        let mut at = self.leaf.get(&chat).copied().flatten();
        while let Some(id) = at {
            let message = self.find(id).expect("the path holds kept messages").clone();
            at = message.parent_id;
            path.push(message);
        }
        path.reverse();
        path
    }

    fn find(&self, id: MessageId) -> Option<&StoredMessage> {
        self.messages.iter().find(|m| m.id == id)
    }

    /// Notes a write; whether it is refused.
    fn write(&mut self, message: MessageId, role: Role, content: &str, status: MessageStatus) -> Result<(), StoreFault> {
        let failed = self.failing > 0;
        if failed && self.failing != u32::MAX {
            self.failing -= 1;
        }
        self.writes.push(Write { at: Instant::now(), message, role, content: content.to_owned(), status, failed });
        if failed { Err(StoreFault("database or disk is full".into())) } else { Ok(()) }
    }

    /// `message` with its siblings as they are now.
    fn with_siblings(&self, message: &StoredMessage) -> StoredMessage {
        let siblings = self.messages.iter().filter(|m| m.chat_id == message.chat_id && m.parent_id == message.parent_id).map(|m| m.id);
        StoredMessage { siblings: siblings.collect(), ..message.clone() }
    }
}

fn missing(what: &str) -> StoreFault {
    StoreFault(format!("{what} not found"))
}

impl HistoryStore for MemoryStore {
    type Error = StoreFault;

    async fn messages(&self, chat: ChatId) -> Result<Vec<StoredMessage>, StoreFault> {
        let chats = self.chats.lock().unwrap();
        if !chats.leaf.contains_key(&chat) {
            return Err(missing("chat"));
        }
        Ok(chats.path(chat).iter().map(|m| chats.with_siblings(m)).collect())
    }

    async fn message(&self, id: MessageId) -> Result<StoredMessage, StoreFault> {
        let chats = self.chats.lock().unwrap();
        chats.find(id).map(|m| chats.with_siblings(m)).ok_or_else(|| missing("message"))
    }

    async fn path_to(&self, id: MessageId) -> Result<Vec<StoredMessage>, StoreFault> {
        let chats = self.chats.lock().unwrap();
        let mut path = Vec::new();
        let mut at = Some(id);
        while let Some(id) = at {
            let message = chats.find(id).ok_or_else(|| missing("message"))?;
            at = message.parent_id;
            path.push(chats.with_siblings(message));
        }
        path.reverse();
        Ok(path)
    }

    async fn system_prompt(&self, chat: ChatId) -> Result<String, StoreFault> {
        self.chats.lock().unwrap().system.get(&chat).cloned().ok_or_else(|| missing("chat"))
    }

    async fn chat_target(&self, chat: ChatId) -> Result<ModelTarget, StoreFault> {
        let chats = self.chats.lock().unwrap();
        chats.leaf.get(&chat).map(|_| ModelTarget::LOADED).ok_or_else(|| missing("chat"))
    }

    async fn append_message(
        &self,
        chat: ChatId,
        parent: Option<MessageId>,
        role: Role,
        content: &str,
        status: MessageStatus,
        model: Option<&str>,
    ) -> Result<StoredMessage, StoreFault> {
        let mut chats = self.chats.lock().unwrap();
        if !chats.leaf.contains_key(&chat) {
            return Err(missing("chat"));
        }
        let id = chats.messages.len() as MessageId + 1;
        chats.write(id, role, content, status)?;
        let message = StoredMessage {
            id,
            chat_id: chat,
            role,
            content: content.to_owned(),
            status,
            created_at: 0,
            model: model.map(str::to_owned),
            stats: None,
            parent_id: parent,
            siblings: Vec::new(),
            tool: None,
            tool_calls: Vec::new(),
            attachments: Vec::new(),
            passages: Vec::new(),
        };
        chats.messages.push(message.clone());
        chats.leaf.insert(chat, Some(id));
        Ok(chats.with_siblings(&message))
    }

    async fn append_question(
        &self,
        chat: ChatId,
        parent: Option<MessageId>,
        content: &str,
        attachments: &[Attachment],
        passages: &[Passage],
    ) -> Result<StoredMessage, StoreFault> {
        let message = self.append_message(chat, parent, Role::User, content, MessageStatus::Complete, None).await?;
        let mut chats = self.chats.lock().unwrap();
        let stored = chats.messages.iter_mut().find(|m| m.id == message.id).expect("just added");
        stored.attachments = attachments.to_vec();
        stored.passages = passages.to_vec();
        Ok(StoredMessage { attachments: attachments.to_vec(), passages: passages.to_vec(), ..message })
    }

    /// Passages ranked by how many of the query's words they hold (the SQLite store ranks by
    /// BM25), fused with their closeness to `meaning` as the SQLite store fuses them, the
    /// documents' first passages filling the rest when `fill`.
    async fn passages(
        &self,
        hashes: &[&str],
        query: &str,
        meaning: Option<&Meaning>,
        limit: usize,
        fill: bool,
    ) -> Result<Vec<Passage>, StoreFault> {
        let chats = self.chats.lock().unwrap();
        let words: Vec<String> = query.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 3).map(str::to_lowercase).collect();
        let mut all = Vec::new();
        for hash in hashes {
            let Some(text) = chats.documents.get(*hash) else { continue };
            for (ordinal, range) in passage_ranges(text).into_iter().enumerate() {
                let passage =
                    Passage { hash: hash.to_string(), name: String::new(), ordinal: ordinal as u32, text: text[range].to_owned() };
                let lower = passage.text.to_lowercase();
                all.push((words.iter().filter(|w| lower.contains(w.as_str())).count(), passage));
            }
        }
        let mut ranked: Vec<&(usize, Passage)> = all.iter().filter(|(score, _)| *score > 0).collect();
        ranked.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
        if let Some(meaning) = meaning {
            let mut close: Vec<(f32, &Passage)> = all
                .iter()
                .filter_map(|(_, p)| {
                    let vector = chats.meanings.get(&(p.hash.clone(), p.ordinal, meaning.model.clone()))?;
                    Some((closeness(vector, &meaning.vector), p))
                })
                .collect();
            close.sort_by(|a, b| b.0.total_cmp(&a.0));
            let words: Vec<&Passage> = ranked.iter().map(|(_, p)| p).collect();
            let meant: Vec<&Passage> = close.into_iter().map(|(_, p)| p).collect();
            return Ok(fuse_rankings(&words, &meant).into_iter().take(limit).cloned().collect());
        }
        let openings = all.iter().filter(|(score, p)| fill && *score == 0 && (p.ordinal as usize) < limit);
        Ok(ranked.into_iter().chain(openings).take(limit).map(|(_, p)| p.clone()).collect())
    }

    async fn passages_without_meaning(&self, hashes: &[&str], model: &str, limit: usize) -> Result<(Vec<Passage>, u64), StoreFault> {
        let chats = self.chats.lock().unwrap();
        let mut missing = Vec::new();
        for hash in hashes {
            let Some(text) = chats.documents.get(*hash) else { continue };
            for (ordinal, range) in passage_ranges(text).into_iter().enumerate() {
                if !chats.meanings.contains_key(&(hash.to_string(), ordinal as u32, model.to_owned())) {
                    missing.push(Passage {
                        hash: hash.to_string(),
                        name: String::new(),
                        ordinal: ordinal as u32,
                        text: text[range].to_owned(),
                    });
                }
            }
        }
        let left = missing.len() as u64;
        missing.truncate(limit);
        Ok((missing, left))
    }

    async fn keep_meanings(&self, model: &str, meanings: &[PassageMeaning]) -> Result<(), StoreFault> {
        let mut chats = self.chats.lock().unwrap();
        for m in meanings {
            chats.meanings.insert((m.hash.clone(), m.ordinal, model.to_owned()), m.vector.clone());
        }
        Ok(())
    }

    async fn document_texts(&self, hashes: &[&str]) -> Result<DocumentTexts, StoreFault> {
        let chats = self.chats.lock().unwrap();
        Ok(hashes.iter().filter_map(|h| chats.documents.get(*h).map(|text| (h.to_string(), text.clone()))).collect())
    }

    async fn images(&self, hashes: &[&str]) -> Result<Vec<ImageInput>, StoreFault> {
        let chats = self.chats.lock().unwrap();
        Ok(hashes
            .iter()
            .filter_map(|h| chats.images.get(*h).map(|bytes| ImageInput { hash: h.to_string(), bytes: bytes.clone() }))
            .collect())
    }

    async fn append_tool_result(&self, chat: ChatId, parent: MessageId, content: &str, run: &ToolRun) -> Result<StoredMessage, StoreFault> {
        let message = self.append_message(chat, Some(parent), Role::Tool, content, MessageStatus::Complete, None).await?;
        let mut chats = self.chats.lock().unwrap();
        let stored = chats.messages.iter_mut().find(|m| m.id == message.id).expect("just added");
        stored.tool = Some(run.clone());
        Ok(StoredMessage { tool: Some(run.clone()), ..message })
    }

    async fn update_reply(
        &self,
        id: MessageId,
        content: &str,
        status: MessageStatus,
        stats: Option<&ReplyStats>,
    ) -> Result<StoredMessage, StoreFault> {
        let mut chats = self.chats.lock().unwrap();
        let role = chats.find(id).ok_or_else(|| missing("message"))?.role;
        chats.write(id, role, content, status)?;
        let message = chats.messages.iter_mut().find(|m| m.id == id).expect("found above");
        message.content = content.to_owned();
        message.status = status;
        message.tool_calls = hearth_core::written_calls(role, content);
        if let Some(stats) = stats {
            message.stats = Some(stats.clone());
        }
        let message = message.clone();
        Ok(chats.with_siblings(&message))
    }

    async fn save_token_probs(&self, id: MessageId, tokens: &[TokenProbs]) -> Result<(), StoreFault> {
        self.chats.lock().unwrap().tokens.insert(id, tokens.to_vec());
        Ok(())
    }

    async fn token_probs(&self, id: MessageId) -> Result<Vec<TokenProbs>, StoreFault> {
        Ok(self.chats.lock().unwrap().tokens.get(&id).cloned().unwrap_or_default())
    }
}
