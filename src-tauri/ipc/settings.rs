use serde::Serialize;
use tauri::State;
use ts_rs::TS;

use hearth_core::{FieldRange, Preset, SamplingParams, SettingsScope};

use crate::AppState;
use crate::ipc::IpcError;
use crate::ipc::contract::command;

/// What the settings panel needs for one scope: the values in force there and where they come
/// from, the defaults, the ranges the backend enforces, and the presets.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SamplingSettings {
    pub current: SamplingParams,
    /// The scope `current` comes from: this one (its own settings), a broader one, or `null` for
    /// the defaults.
    pub source: Option<SettingsScope>,
    /// True when `current` is the scope's own.
    pub own: bool,
    pub defaults: SamplingParams,
    pub ranges: Vec<FieldRange>,
    /// Built-in presets first, then the user's.
    pub presets: Vec<Preset>,
}

command! {
    /// Settings at `scope` (default: global).
    pub async fn get_sampling(scope: Option<SettingsScope>, state: State<'_, AppState>) -> Result<SamplingSettings, IpcError> {
        let scope = scope.unwrap_or(SettingsScope::Global);
        let resolved = state.sampling(&scope).await?;
        Ok(SamplingSettings {
            own: resolved.source.as_ref() == Some(&scope),
            current: resolved.params,
            source: resolved.source,
            defaults: SamplingParams::default(),
            ranges: SamplingParams::ranges().to_vec(),
            presets: state.settings.presets().await?,
        })
    }
}

command! {
    /// Saves sampling settings at `scope` (default: global); the next reply uses them. Out-of-range
    /// values are refused with the field and its range.
    pub async fn set_sampling(
        params: SamplingParams,
        scope: Option<SettingsScope>,
        state: State<'_, AppState>,
    ) -> Result<SamplingParams, IpcError> {
        state.settings.set_sampling(&scope.unwrap_or(SettingsScope::Global), &params).await?;
        Ok(params)
    }
}

command! {
    /// Makes `scope` inherit again from the broader scopes.
    pub async fn clear_sampling(scope: SettingsScope, state: State<'_, AppState>) -> Result<(), IpcError> {
        Ok(state.settings.clear_sampling(&scope).await?)
    }
}

command! {
    pub async fn save_preset(name: String, params: SamplingParams, state: State<'_, AppState>) -> Result<(), IpcError> {
        Ok(state.settings.save_preset(&name, params).await?)
    }
}

command! {
    pub async fn delete_preset(name: String, state: State<'_, AppState>) -> Result<(), IpcError> {
        Ok(state.settings.delete_preset(&name).await?)
    }
}
