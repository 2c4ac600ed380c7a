use std::collections::HashMap;
use std::error::Error as StdError;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::{Instant, MissedTickBehavior};

use crate::{
    BackendError, CancelFlag, ChatBackend, ChatId, ChatMessage, FinishReason, GenEvent, MessageId,
    MessageStatus, ReplyRequest, ReplyStats, Role, SamplingParams, StoredMessage,
};

/// Where chats are kept. Implemented by hearth-store over SQLite.
pub trait HistoryStore: Send + Sync + 'static {
    type Error: StdError + Send + Sync + 'static;

    /// The chat's messages, oldest first. Fails if the chat does not exist.
    fn messages(
        &self,
        chat: ChatId,
    ) -> impl Future<Output = Result<Vec<StoredMessage>, Self::Error>> + Send;

    fn append_message(
        &self,
        chat: ChatId,
        role: Role,
        content: &str,
        status: MessageStatus,
        model: Option<&str>,
    ) -> impl Future<Output = Result<StoredMessage, Self::Error>> + Send;

    fn update_reply(
        &self,
        id: MessageId,
        content: &str,
        status: MessageStatus,
        stats: Option<&ReplyStats>,
    ) -> impl Future<Output = Result<StoredMessage, Self::Error>> + Send;
}

/// What a caller sees of a turn while it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEvent {
    UserSaved(StoredMessage),
    ReplyStarted { message_id: MessageId, model: String },
    Delta(String),
}

#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error("{0}")]
    InvalidInput(String),
    #[error("this chat is already generating a reply; wait for it or press Stop")]
    Busy,
    #[error("could not save the chat: {0}")]
    Store(#[source] Box<dyn StdError + Send + Sync>),
    /// The backend failed. `reply` is the partial reply as saved, if one had started.
    #[error("{error}")]
    Backend { error: BackendError, reply: Option<StoredMessage> },
}

/// Runs one chat turn: saves the user's message, streams the reply from the backend, saves the reply
/// as it streams (at least every `flush_every`), and marks it finished.
pub struct ChatService<B, S> {
    backend: Arc<B>,
    store: Arc<S>,
    flush_every: Duration,
    active: Mutex<HashMap<ChatId, CancelFlag>>,
}

impl<B: ChatBackend, S: HistoryStore> ChatService<B, S> {
    pub fn new(backend: Arc<B>, store: Arc<S>) -> Self {
        Self::with_flush_interval(backend, store, Duration::from_millis(500))
    }

    pub fn with_flush_interval(backend: Arc<B>, store: Arc<S>, flush_every: Duration) -> Self {
        ChatService { backend, store, flush_every, active: Mutex::new(HashMap::new()) }
    }

    pub fn store(&self) -> &Arc<S> {
        &self.store
    }

    pub fn backend(&self) -> &Arc<B> {
        &self.backend
    }

    /// Asks the reply being generated in `chat` to stop. Returns false if none is running.
    pub fn stop(&self, chat: ChatId) -> bool {
        match self.active.lock().expect("active map poisoned").get(&chat) {
            Some(flag) => {
                flag.cancel();
                true
            }
            None => false,
        }
    }

    /// Sends `content` as the user in `chat` and returns the finished assistant reply.
    pub async fn send(
        &self,
        chat: ChatId,
        content: &str,
        sampling: SamplingParams,
        mut on_event: impl FnMut(TurnEvent) + Send,
    ) -> Result<StoredMessage, TurnError> {
        if content.trim().is_empty() {
            return Err(TurnError::InvalidInput("the message is empty".into()));
        }
        sampling.validate().map_err(|e| TurnError::InvalidInput(e.to_string()))?;
        let turn = ActiveTurn::register(&self.active, chat)?;

        let store = &*self.store;
        let boxed = |e: S::Error| TurnError::Store(Box::new(e));
        let mut history = store.messages(chat).await.map_err(boxed)?;
        let user = store
            .append_message(chat, Role::User, content, MessageStatus::Complete, None)
            .await
            .map_err(boxed)?;
        on_event(TurnEvent::UserSaved(user.clone()));
        history.push(user);

        let request = ReplyRequest {
            messages: conversation(&history),
            sampling,
            cancel: turn.flag.clone(),
        };
        let mut stream = self
            .backend
            .start_reply(request)
            .map_err(|error| TurnError::Backend { error, reply: None })?;
        let reply = store
            .append_message(chat, Role::Assistant, "", MessageStatus::Streaming, Some(&stream.model))
            .await
            .map_err(boxed)?;
        on_event(TurnEvent::ReplyStarted { message_id: reply.id, model: stream.model.clone() });

        let mut text = String::new();
        let mut unsaved = false;
        let mut flush = tokio::time::interval_at(Instant::now() + self.flush_every, self.flush_every);
        flush.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let outcome = loop {
            tokio::select! {
                event = stream.events.recv() => match event {
                    Some(GenEvent::Delta(delta)) => {
                        text.push_str(&delta);
                        unsaved = true;
                        on_event(TurnEvent::Delta(delta));
                    }
                    Some(GenEvent::Finished { reason, stats }) => break Ok((reason, stats)),
                    Some(GenEvent::Failed(error)) => break Err(error),
                    None => break Err(BackendError::EngineGone),
                },
                _ = flush.tick(), if unsaved => {
                    // A failed flush is not fatal: the final save below reports the problem.
                    match store.update_reply(reply.id, &text, MessageStatus::Streaming, None).await {
                        Ok(_) => unsaved = false,
                        Err(e) => tracing::warn!(error = %e, "could not flush the streaming reply"),
                    }
                }
            }
        };

        match outcome {
            Ok((reason, stats)) => {
                let status = match reason {
                    FinishReason::Cancelled => MessageStatus::Stopped,
                    FinishReason::EndOfTurn | FinishReason::StopString | FinishReason::Length => {
                        MessageStatus::Complete
                    }
                };
                store.update_reply(reply.id, &text, status, Some(&stats)).await.map_err(boxed)
            }
            Err(error) => {
                let saved = store.update_reply(reply.id, &text, MessageStatus::Failed, None).await;
                let reply = saved.map_err(|e| tracing::error!(error = %e, "could not save failed reply"));
                Err(TurnError::Backend { error, reply: reply.ok() })
            }
        }
    }
}

/// The messages a backend should see: everything but replies that produced no text.
fn conversation(history: &[StoredMessage]) -> Vec<ChatMessage> {
    history
        .iter()
        .filter(|m| !(m.role == Role::Assistant && m.content.is_empty()))
        .map(StoredMessage::to_chat_message)
        .collect()
}

/// Marks a chat as generating for as long as it lives; dropping it (turn over, or the caller gave
/// up on the future) cancels the backend and frees the chat.
struct ActiveTurn<'a> {
    active: &'a Mutex<HashMap<ChatId, CancelFlag>>,
    chat: ChatId,
    flag: CancelFlag,
}

impl<'a> ActiveTurn<'a> {
    fn register(active: &'a Mutex<HashMap<ChatId, CancelFlag>>, chat: ChatId) -> Result<Self, TurnError> {
        let mut map = active.lock().expect("active map poisoned");
        if map.contains_key(&chat) {
            return Err(TurnError::Busy);
        }
        let flag = CancelFlag::new();
        map.insert(chat, flag.clone());
        Ok(ActiveTurn { active, chat, flag })
    }
}

impl Drop for ActiveTurn<'_> {
    fn drop(&mut self) {
        self.flag.cancel();
        self.active.lock().expect("active map poisoned").remove(&self.chat);
    }
}
