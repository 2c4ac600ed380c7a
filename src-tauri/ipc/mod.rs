//! The IPC surface: the only place that knows the wire format the window speaks.

mod bindings;
pub mod chat;
mod error;
mod models;

pub use bindings::typescript_bindings;
pub use chat::{ChatEvent, FailedReply, MessageSaved, ReplyStarted, TextDelta};
pub use error::{IpcError, IpcErrorKind};

/// Every command registered below, as the window names them (build.rs lists the same).
pub const COMMANDS: &[&str] = &[
    "list_chats",
    "create_chat",
    "list_messages",
    "send_message",
    "stop_generation",
    "active_model",
];

pub fn handler<R: tauri::Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static {
    tauri::generate_handler![
        chat::list_chats,
        chat::create_chat,
        chat::list_messages,
        chat::send_message,
        chat::stop_generation,
        models::active_model,
    ]
}
