use std::ops::Deref;

use hearth_app::{App, AppPaths, OpenError};
use hearth_core::{ChatId, ChatSummary, ModelInfo};

use crate::updates::{BUILT_IN_KEY, Updates};
use crate::watchers::Watchers;

/// Everything the commands need, managed by Tauri: the app (tauri-free) and the windows
/// listening for background changes.
pub struct AppState {
    app: App,
    pub watchers: Watchers<ChatSummary>,
    /// Windows told when the model is unloaded behind their back (idle).
    pub model_watchers: Watchers<Option<ModelInfo>>,
    /// Signed updates, trusting the release key built in.
    pub updates: Updates,
}

impl AppState {
    pub async fn open(paths: AppPaths) -> Result<AppState, OpenError> {
        let mut app = App::open(paths).await?;
        // Replies reach the window as often as it can afford (see window_pace).
        if let Some(pace) = hearth_app::window_pace::MeasuredPace::for_this_window() {
            app.chat.set_window_pace(std::sync::Arc::new(pace));
        }
        Ok(AppState { app, watchers: Watchers::default(), model_watchers: Watchers::default(), updates: Updates::new(BUILT_IN_KEY) })
    }

    /// Unloads the model if it has been idle for the time the user set, and tells the windows.
    pub async fn unload_idle_model(&self) {
        if self.app.unload_idle_model().await {
            self.model_watchers.notify(&None);
        }
    }

    /// Titles `chat` if it is due (see `hearth_app::title_chat`) and tells the windows. Returns
    /// the retitled chat, for tests.
    pub async fn title_chat(&self, chat: ChatId) -> Option<ChatSummary> {
        let summary = hearth_app::title_chat(&**self.chat.backend(), &self.store, chat).await?;
        self.watchers.notify(&summary);
        Some(summary)
    }
}

impl Deref for AppState {
    type Target = App;

    fn deref(&self) -> &App {
        &self.app
    }
}
