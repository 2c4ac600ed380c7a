//! Providers: configure them, keep their keys in the keychain, list their models, test the
//! connection, and switch a chat between the local model and a remote one.

use std::time::Instant;

use serde::Serialize;
use tauri::State;
use ts_rs::TS;

use hearth_core::{ChatId, ChatSummary, FieldSupport, ModelTarget, ProviderConfig, local_sampling_support, sampling_support};
use hearth_providers::{KeyStorage, RemoteModel, Secret};

use crate::AppState;
use crate::ipc::contract::command;
use crate::ipc::{IpcError, IpcErrorKind};

/// A provider as the settings show it: its configuration and where its key is (never the key).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProviderView {
    pub config: ProviderConfig,
    /// `None`: no key saved.
    pub key: Option<KeyStorage>,
}

/// What "Test connection" found.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionReport {
    pub models: Vec<RemoteModel>,
    /// Round trip of the models request, milliseconds.
    pub latency_ms: f64,
}

async fn view(state: &AppState, config: ProviderConfig) -> Result<ProviderView, IpcError> {
    let keys = state.keys.clone();
    let id = config.id.clone();
    let key = tauri::async_runtime::spawn_blocking(move || keys.location(Secret::Provider(&id)))
        .await
        .map_err(|e| IpcError::new(IpcErrorKind::Keychain, e))??;
    Ok(ProviderView { config, key })
}

command! {
    pub async fn list_providers(state: State<'_, AppState>) -> Result<Vec<ProviderView>, IpcError> {
        let mut views = Vec::new();
        for config in state.providers.configs() {
            views.push(view(&state, config).await?);
        }
        Ok(views)
    }
}

command! {
    /// Adds `config`, or replaces the provider with its id; a key saved for another host is
    /// forgotten (`App::save_provider`).
    pub async fn save_provider(config: ProviderConfig, state: State<'_, AppState>) -> Result<ProviderView, IpcError> {
        state.save_provider(config.clone()).await?;
        view(&state, config).await
    }
}

command! {
    /// Removes a provider and its key. Chats that used it say so at their next message.
    pub async fn delete_provider(provider: String, state: State<'_, AppState>) -> Result<(), IpcError> {
        let mut configs = state.providers.configs();
        configs.retain(|c| c.id != provider);
        state.set_providers(configs).await?;
        let keys = state.keys.clone();
        tauri::async_runtime::spawn_blocking(move || keys.delete(Secret::Provider(&provider)))
            .await
            .map_err(|e| IpcError::new(IpcErrorKind::Keychain, e))??;
        Ok(())
    }
}

command! {
    /// Saves `key` for `provider` in the keychain (an empty key forgets it); says where it went.
    pub async fn set_api_key(provider: String, key: String, state: State<'_, AppState>) -> Result<Option<KeyStorage>, IpcError> {
        state.providers.config(&provider)?;
        let keys = state.keys.clone();
        let key = key.trim().to_owned();
        let stored = tauri::async_runtime::spawn_blocking(move || {
            if key.is_empty() { keys.delete(Secret::Provider(&provider)).map(|()| None) } else { keys.set(Secret::Provider(&provider), &key).map(Some) }
        });
        Ok(stored.await.map_err(|e| IpcError::new(IpcErrorKind::Keychain, e))??)
    }
}

command! {
    pub async fn list_provider_models(provider: String, state: State<'_, AppState>) -> Result<Vec<RemoteModel>, IpcError> {
        Ok(state.providers.list_models(&provider).await?)
    }
}

command! {
    /// Asks the provider for its models with the saved URL and key.
    pub async fn test_provider(provider: String, state: State<'_, AppState>) -> Result<ConnectionReport, IpcError> {
        let started = Instant::now();
        let models = state.providers.list_models(&provider).await?;
        Ok(ConnectionReport { models, latency_ms: started.elapsed().as_secs_f64() * 1000.0 })
    }
}

command! {
    /// Where the chat's next reply comes from. Earlier replies keep the model that wrote them.
    pub async fn set_chat_model(chat_id: ChatId, target: ModelTarget, state: State<'_, AppState>) -> Result<ChatSummary, IpcError> {
        match &target {
            ModelTarget::Remote { provider, model } => {
                state.providers.config(provider)?;
                if model.trim().is_empty() {
                    return Err(IpcError::new(IpcErrorKind::InvalidInput, "pick a model of the provider"));
                }
            }
            ModelTarget::Local { model: Some(path) } if !std::path::Path::new(path).is_file() => {
                return Err(IpcError::new(IpcErrorKind::InvalidInput, format!("there is no model file at {path}")));
            }
            ModelTarget::Local { .. } => {}
        }
        Ok(state.store.set_chat_target(chat_id, &target).await?)
    }
}

command! {
    /// Which sampling settings reach the model behind `target`.
    pub async fn sampling_support_for(target: ModelTarget, state: State<'_, AppState>) -> Result<Vec<FieldSupport>, IpcError> {
        Ok(match target {
            ModelTarget::Local { model } => {
                let path = model.or_else(|| state.models.loaded_path());
                let reasoning = match path {
                    Some(path) => state.models.reasoning_format(&path).await,
                    None => None,
                };
                // A model not known yet (none loaded, none chosen) may take every setting.
                reasoning.map_or_else(|| sampling_support(None), local_sampling_support)
            }
            ModelTarget::Remote { provider, .. } => sampling_support(Some(&state.providers.config(&provider)?)),
        })
    }
}
