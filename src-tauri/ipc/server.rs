//! Settings → Server: Hearth's OpenAI-compatible server, switched on and off from the window.

use tauri::State;

use hearth_app::{ServerSettings, ServerStatus};

use crate::AppState;
use crate::ipc::IpcError;
use crate::ipc::contract::command;

command! {
    /// The server's settings, where it listens (or why it does not), and the requests it answered.
    pub async fn get_server(state: State<'_, AppState>) -> Result<ServerStatus, IpcError> {
        Ok(state.server_status().await?)
    }
}

command! {
    /// Saves the server's settings and starts, stops or moves it at once.
    pub async fn set_server(settings: ServerSettings, state: State<'_, AppState>) -> Result<ServerStatus, IpcError> {
        Ok(state.set_server(settings).await?)
    }
}

command! {
    /// Saves the server's API key in the keychain (`None` removes it); it is never sent back.
    pub async fn set_server_key(key: Option<String>, state: State<'_, AppState>) -> Result<ServerStatus, IpcError> {
        Ok(state.set_server_key(key).await?)
    }
}
