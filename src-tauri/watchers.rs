//! Windows listening for chats changed in the background (`watch_chats`), e.g. titled by the model.

use std::sync::Mutex;

use tauri::ipc::Channel;

use hearth_core::ChatSummary;

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
