use serde::Serialize;
use tauri::State;
use tauri::ipc::Channel;
use ts_rs::TS;

use hearth_core::{
    ChatId, ChatSummary, HistoryStore, MessageId, SettingsScope, StoredMessage, TurnError, TurnEvent,
};

use crate::AppState;
use crate::ipc::IpcError;

/// The stream of one `send_message` call, in order: `userSaved`, `replyStarted`, `delta`*, then
/// `finished` or `failed`.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "event", content = "data", rename_all = "camelCase")]
pub enum ChatEvent {
    UserSaved(MessageSaved),
    ReplyStarted(ReplyStarted),
    Delta(TextDelta),
    Finished(MessageSaved),
    Failed(FailedReply),
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct MessageSaved {
    pub message: StoredMessage,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReplyStarted {
    #[ts(type = "number")]
    pub message_id: MessageId,
    pub model: String,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct TextDelta {
    pub text: String,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct FailedReply {
    pub error: IpcError,
    /// The partial reply as saved, if one had started.
    pub message: Option<StoredMessage>,
}

impl From<TurnEvent> for ChatEvent {
    fn from(event: TurnEvent) -> Self {
        match event {
            TurnEvent::UserSaved(message) => ChatEvent::UserSaved(MessageSaved { message }),
            TurnEvent::ReplyStarted { message_id, model } => {
                ChatEvent::ReplyStarted(ReplyStarted { message_id, model })
            }
            TurnEvent::Delta(text) => ChatEvent::Delta(TextDelta { text }),
        }
    }
}

#[tauri::command]
pub async fn list_chats(state: State<'_, AppState>) -> Result<Vec<ChatSummary>, IpcError> {
    Ok(state.store.list_chats().await?)
}

#[tauri::command]
pub async fn create_chat(state: State<'_, AppState>) -> Result<ChatSummary, IpcError> {
    Ok(state.store.create_chat().await?)
}

#[tauri::command]
pub async fn list_messages(chat_id: ChatId, state: State<'_, AppState>) -> Result<Vec<StoredMessage>, IpcError> {
    Ok(state.store.messages(chat_id).await?)
}

/// Sends a user message and streams the reply over `on_event`. Resolves once the reply has
/// finished or failed; rejects only if nothing could be started (e.g. an empty message).
#[tauri::command]
pub async fn send_message(
    chat_id: ChatId,
    content: String,
    on_event: Channel<ChatEvent>,
    state: State<'_, AppState>,
) -> Result<(), IpcError> {
    state.model_settled().await;
    let emit = |event: ChatEvent| {
        if let Err(e) = on_event.send(event) {
            tracing::warn!(error = %e, "the window stopped listening to a reply");
        }
    };
    let sampling = state.sampling(&SettingsScope::Chat { id: chat_id }).await?;
    match state.chat.send(chat_id, &content, sampling, |e| emit(e.into())).await {
        Ok(message) => emit(ChatEvent::Finished(MessageSaved { message })),
        Err(TurnError::Backend { error, reply }) => {
            emit(ChatEvent::Failed(FailedReply { error: error.into(), message: reply }))
        }
        Err(other) => return Err(other.into()),
    }
    Ok(())
}

#[tauri::command]
pub fn stop_generation(chat_id: ChatId, state: State<'_, AppState>) {
    state.chat.stop(chat_id);
}
