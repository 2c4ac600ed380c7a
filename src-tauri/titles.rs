//! Chat titles written by the model after a chat's first exchange, in the background: the reply
//! has already finished, and the engine serves the title beside the conversation's KV cache,
//! dropping it the moment a new reply is asked for (it is tried again after the next turn).

use std::sync::Mutex;

use tauri::ipc::Channel;

use hearth_core::{ChatId, ChatSummary, HistoryStore, generate_title};

use crate::AppState;

/// Windows listening for chats changed in the background (`watch_chats`).
#[derive(Default)]
pub struct ChatWatchers(Mutex<Vec<Channel<ChatSummary>>>);

impl ChatWatchers {
    pub fn add(&self, channel: Channel<ChatSummary>) {
        self.0.lock().expect("watchers poisoned").push(channel);
    }

    /// Tells every window; a window that went away (reloaded, closed) is forgotten.
    pub fn notify(&self, chat: &ChatSummary) {
        self.0.lock().expect("watchers poisoned").retain(|channel| channel.send(chat.clone()).is_ok());
    }
}

/// Titles `chat` from its first exchange if it still has its automatic first-line title; the
/// new title goes to the watchers. Returns it, for tests.
pub async fn title_chat(state: &AppState, chat: ChatId) -> Option<ChatSummary> {
    let result = async {
        let Some((user, reply)) = state.store.first_exchange_to_title(chat).await? else { return Ok(None) };
        let Some(title) = generate_title(&**state.chat.backend(), state.store.chat_target(chat).await?, &user, &reply).await? else { return Ok(None) };
        let summary = state.store.set_auto_title(chat, &title).await?;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(Some(summary))
    };
    match result.await {
        Ok(Some(summary)) => {
            tracing::info!(chat, title = %summary.title, "chat titled");
            state.watchers.notify(&summary);
            Some(summary)
        }
        Ok(None) => None,
        // A missing title is cosmetic: the chat keeps its first-line title.
        Err(e) => {
            tracing::warn!(chat, error = %e, "could not title the chat");
            None
        }
    }
}
