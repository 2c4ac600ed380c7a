//! Windows listening for what changes in the background: chats (`watch_chats`, e.g. titled by
//! the model) and the loaded model (`watch_model`, e.g. unloaded while idle).

use std::sync::Mutex;

use serde::Serialize;
use tauri::ipc::{Channel, IpcResponse};

pub struct Watchers<T>(Mutex<Vec<Channel<T>>>);

impl<T> Default for Watchers<T> {
    fn default() -> Self {
        Watchers(Mutex::default())
    }
}

impl<T: IpcResponse + Serialize + Clone> Watchers<T> {
    pub fn add(&self, channel: Channel<T>) {
        self.0.lock().expect("watchers poisoned").push(channel);
    }

    /// Tells every window; a window that went away (reloaded, closed) is forgotten.
    pub fn notify(&self, change: &T) {
        self.0.lock().expect("watchers poisoned").retain(|channel| channel.send(change.clone()).is_ok());
    }
}
