//! Settings → Tools: the user's MCP servers — added by form or by pasting `mcpServers` JSON, each
//! with its state (starting, ready with its tools, failed with its stderr, asking to sign in),
//! restarted, stopped, or signed in to.

use tauri::State;
use tauri::ipc::Channel;

use hearth_app::PendingQuestion;
use hearth_mcp::oauth::{EnterpriseIdentity, MachineCredentials};
use hearth_mcp::questions::Answer;
use hearth_mcp::{McpServerConfig, McpServerStatus};

use crate::AppState;
use crate::ipc::IpcError;
use crate::ipc::contract::command;

command! {
    /// The MCP servers and where each stands.
    pub fn list_tool_servers(state: State<'_, AppState>) -> Vec<McpServerStatus> {
        state.tools.statuses()
    }
}

command! {
    /// Saves the whole list (environment and headers to the keychain); servers changed or gone
    /// are stopped.
    pub async fn save_tool_servers(servers: Vec<McpServerConfig>, state: State<'_, AppState>) -> Result<Vec<McpServerStatus>, IpcError> {
        Ok(state.tools.save(servers).await?)
    }
}

command! {
    /// Adds the servers of pasted `mcpServers` JSON (Claude Desktop, Cursor, LM Studio, VS Code);
    /// one of the same name is replaced.
    pub async fn add_tool_servers(json: String, state: State<'_, AppState>) -> Result<Vec<McpServerStatus>, IpcError> {
        Ok(state.tools.add_pasted(&json).await?)
    }
}

command! {
    /// Starts the server again (a failure shows in its state, with its stderr).
    pub async fn restart_tool_server(name: String, state: State<'_, AppState>) -> Result<Vec<McpServerStatus>, IpcError> {
        Ok(state.tools.restart(&name).await?)
    }
}

command! {
    /// Signs in to server `name`, which asked to (OAuth): its sign-in page opens in the system's
    /// browser; once the user has signed in there, the server starts again with the token (kept
    /// in the keychain). Answers when the sign-in is done, failed, or given up after 5 minutes.
    pub async fn sign_in_tool_server(name: String, state: State<'_, AppState>) -> Result<Vec<McpServerStatus>, IpcError> {
        Ok(state.tools.sign_in(&name, |page| crate::ipc::open_with_system(std::ffi::OsStr::new(page))).await?)
    }
}

command! {
    /// Signs in to server `name` as a machine client its organisation registered Hearth as (a
    /// client id, and its secret or private key): kept in the keychain, the server starts again
    /// signing in with them, and again whenever its token runs out. Answers with the servers'
    /// states (a refused sign-in shows as the server's failure).
    pub async fn sign_in_tool_server_as_client(
        name: String,
        credentials: MachineCredentials,
        state: State<'_, AppState>,
    ) -> Result<Vec<McpServerStatus>, IpcError> {
        Ok(state.tools.sign_in_as_client(&name, credentials).await?)
    }
}

command! {
    /// Signs in to server `name` with the user's enterprise identity, the user signing in for it
    /// at the identity provider's page (opened in the system's browser; `identity`'s token is not
    /// used): then as `sign_in_tool_server_as_client`. A sign-in refused at the identity provider
    /// is this command's error, the server left as it was; 5 minutes to sign in.
    pub async fn sign_in_tool_server_at_idp(
        name: String,
        identity: EnterpriseIdentity,
        state: State<'_, AppState>,
    ) -> Result<Vec<McpServerStatus>, IpcError> {
        let open = |page: &str| crate::ipc::open_with_system(std::ffi::OsStr::new(page));
        Ok(state.tools.sign_in_at_idp(&name, identity, open).await?)
    }
}

command! {
    /// Stops the server; it starts again when a chat needs its tools.
    pub async fn stop_tool_server(name: String, state: State<'_, AppState>) -> Result<Vec<McpServerStatus>, IpcError> {
        Ok(state.tools.stop(&name).await?)
    }
}

command! {
    /// Registers the window for every change of a server's state (the whole list each time).
    pub fn watch_tool_servers(on_update: Channel<Vec<McpServerStatus>>, state: State<'_, AppState>) {
        let tools = state.tools.clone();
        let mut changes = tools.hub().subscribe();
        tauri::async_runtime::spawn(async move {
            while changes.changed().await.is_ok() {
                if on_update.send(tools.statuses()).is_err() {
                    return;
                }
            }
        });
    }
}

command! {
    /// Sends the MCP servers' questions waiting for the user (elicitation) over `on_update` now,
    /// and again at every change (asked, answered, withdrawn).
    pub fn watch_tool_questions(on_update: Channel<Vec<PendingQuestion>>, state: State<'_, AppState>) {
        let questions = state.questions.clone();
        let mut changes = questions.subscribe();
        let _ = on_update.send(questions.pending());
        tauri::async_runtime::spawn(async move {
            while changes.changed().await.is_ok() {
                if on_update.send(questions.pending()).is_err() {
                    return;
                }
            }
        });
    }
}

command! {
    /// Answers question `id`: the form sent (what it asked, of its types; fields left out take
    /// the server's defaults), its link opened in the system's browser, declined, or dismissed.
    pub fn answer_tool_question(id: u64, answer: Answer, state: State<'_, AppState>) -> Result<(), IpcError> {
        Ok(state.questions.answer(id, answer, |url| crate::ipc::open_with_system(std::ffi::OsStr::new(url)))?)
    }
}
