//! Chat titles written by the model after a chat's first exchange, in the background: the reply
//! has already finished, and the engine serves the title beside the conversation's KV cache,
//! dropping it the moment a new reply is asked for (it is tried again after the next turn).

use hearth_core::{ChatBackend, ChatId, ChatSummary, HistoryStore, generate_title};
use hearth_store::Store;

/// Titles `chat` from its first exchange if it still has its automatic first-line title.
/// Returns the retitled chat; `None` when there was nothing to do or no usable title (a missing
/// title is cosmetic: the chat keeps its first-line title).
pub async fn title_chat<B: ChatBackend + ?Sized>(backend: &B, store: &Store, chat: ChatId) -> Option<ChatSummary> {
    let result = async {
        let Some((user, reply)) = store.first_exchange_to_title(chat).await? else { return Ok(None) };
        let Some(title) = generate_title(backend, store.chat_target(chat).await?, &user, &reply).await? else { return Ok(None) };
        let summary = store.set_auto_title(chat, &title).await?;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(Some(summary))
    };
    match result.await {
        Ok(Some(summary)) => {
            tracing::info!(chat, title = %summary.title, "chat titled");
            Some(summary)
        }
        Ok(None) => None,
        Err(e) => {
            tracing::warn!(chat, error = %e, "could not title the chat");
            None
        }
    }
}
