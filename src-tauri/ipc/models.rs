use serde::Serialize;
use tauri::State;
use tauri::ipc::Channel;
use ts_rs::TS;

use hearth_app::{ChatCacheUsage, ModelLoading};
use hearth_core::{CacheBudgets, ChatId, ChatSummary, DeviceReport, FieldError, LoadParams, ModelInfo};

use crate::AppState;
use crate::ipc::contract::command;
use crate::ipc::{IpcError, IpcErrorKind};

command! {
    /// The loaded model, once the start-up load has settled; `None` if there is none, an error
    /// saying why if the start-up load failed or was skipped (safe mode).
    pub async fn active_model(state: State<'_, AppState>) -> Result<Option<ModelInfo>, IpcError> {
        state.models.settled().await;
        match (state.models.loaded(), state.models.startup_problem()) {
            (None, Some(problem)) => Err(IpcError::new(IpcErrorKind::Engine, problem)),
            (loaded, _) => Ok(loaded),
        }
    }
}

command! {
    /// The compute devices the engine found (GPUs first, the CPU last), and each backend it could
    /// not use with the reason: asked of the engine process, where a failing driver costs only it.
    pub async fn compute_devices(state: State<'_, AppState>) -> Result<DeviceReport, IpcError> {
        Ok(state.engine.devices().await)
    }
}

command! {
    /// Loads the model chat `chat_id` talks to when another one (or none) is loaded, reporting
    /// which and llama.cpp's progress (0 to 1, the first at 0 as it begins); `None` when nothing
    /// needed loading. Called as a chat opens, and before a comparison.
    pub async fn load_chat_model(
        chat_id: ChatId,
        on_progress: Channel<ModelLoading>,
        state: State<'_, AppState>,
    ) -> Result<Option<ModelInfo>, IpcError> {
        let progress = move |loading| {
            let _ = on_progress.send(loading);
        };
        Ok(state.ready_chat_model(chat_id, progress).await?)
    }
}

/// A chat and the model loaded for it, if one had to be.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ChatModelLoaded {
    pub chat: ChatSummary,
    pub loaded: Option<ModelInfo>,
}

command! {
    /// Makes the local model file `path` the one chat `chat_id` talks to, and loads it (progress
    /// 0 to 1) unless it is loaded.
    pub async fn use_local_model(
        chat_id: ChatId,
        path: String,
        on_progress: Channel<f32>,
        state: State<'_, AppState>,
    ) -> Result<ChatModelLoaded, IpcError> {
        let loaded = state.use_local_model(chat_id, &path, progress_to(on_progress)).await?;
        Ok(ChatModelLoaded { chat: state.store.chat(chat_id).await?, loaded })
    }
}

pub(crate) fn progress_to(channel: Channel<f32>) -> impl FnMut(f32) + Send + 'static {
    move |fraction| {
        let _ = channel.send(fraction);
    }
}

command! {
    /// Registers the window for changes of the loaded model it did not ask for: `None` when the
    /// model was unloaded after the idle time set.
    pub fn watch_model(on_update: Channel<Option<ModelInfo>>, state: State<'_, AppState>) {
        state.model_watchers.add(on_update);
    }
}

command! {
    /// What chats' KV caches take in RAM and on disk, and their budgets.
    pub async fn chat_cache_usage(state: State<'_, AppState>) -> Result<ChatCacheUsage, IpcError> {
        Ok(state.chat_cache_usage().await?)
    }
}

command! {
    /// Saves the budgets for chats' caches and puts them in force at once.
    pub async fn set_chat_cache_budgets(budgets: CacheBudgets, state: State<'_, AppState>) -> Result<ChatCacheUsage, IpcError> {
        Ok(state.set_cache_budgets(budgets).await?)
    }
}

command! {
    /// Drops every chat's KV cache (RAM and disk); each chat's next reply reads its prompt again.
    pub async fn clear_chat_caches(state: State<'_, AppState>) -> Result<ChatCacheUsage, IpcError> {
        Ok(state.clear_chat_caches().await?)
    }
}

/// What the panel's Model group needs: the loaded model (with what its automatic settings
/// resolved to), the settings saved for it, the defaults, and whether a reload would change anything.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LoadSettings {
    pub model: ModelInfo,
    pub saved: LoadParams,
    pub defaults: LoadParams,
    /// True when `saved` differs from the settings the model is loaded with.
    pub needs_reload: bool,
}

async fn load_settings(state: &AppState, model: ModelInfo) -> Result<LoadSettings, IpcError> {
    let saved = state.settings.load_params(&model.path).await?;
    Ok(LoadSettings { needs_reload: saved != model.load, model, saved, defaults: LoadParams::default() })
}

fn loaded(state: &AppState) -> Result<ModelInfo, IpcError> {
    state.models.loaded().ok_or_else(|| IpcError::new(IpcErrorKind::NoModel, "no model is loaded"))
}

command! {
    pub async fn get_load_settings(state: State<'_, AppState>) -> Result<LoadSettings, IpcError> {
        state.models.settled().await;
        load_settings(&state, loaded(&state)?).await
    }
}

command! {
    /// Saves the loaded model's load settings; they apply at its next load (`reload_model`).
    pub async fn set_load_settings(params: LoadParams, state: State<'_, AppState>) -> Result<LoadSettings, IpcError> {
        if let Some(source) = &params.chat_template {
            hearth_engine::ChatTemplate::new(source, "", "").map_err(|e| {
                // minijinja's words alone: "the model's chat template failed" would blame the model.
                IpcError::from(FieldError::new("chatTemplate", format!("the chat template does not compile: {}", e.0)))
            })?;
        }
        let model = loaded(&state)?;
        state.settings.set_load_params(&model.path, &params).await?;
        load_settings(&state, model).await
    }
}

command! {
    /// Reloads the loaded model with its saved load settings. When llama.cpp cannot load it that way
    /// (too long a context for the memory, say), the model is loaded again as it was, so the user
    /// keeps a working model, and the error says what happened.
    pub async fn reload_model(state: State<'_, AppState>) -> Result<LoadSettings, IpcError> {
        let model = state.models.reload().await?;
        load_settings(&state, model).await
    }
}
