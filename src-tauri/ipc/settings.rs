use serde::Serialize;
use tauri::State;
use ts_rs::TS;

use hearth_core::{FieldRange, Preset, SamplingParams, SettingsScope};

use crate::AppState;
use crate::ipc::{IpcError, IpcErrorKind};

/// What the settings panel needs for one scope: the values in force there, whether they are the
/// scope's own or inherited, the defaults, the ranges the backend enforces, and the presets.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SamplingSettings {
    pub current: SamplingParams,
    /// False when `current` comes from a broader scope (or the defaults).
    pub own: bool,
    pub defaults: SamplingParams,
    pub ranges: Vec<FieldRange>,
    /// Built-in presets first, then the user's.
    pub presets: Vec<Preset>,
}

/// Settings at `scope` (default: global).
#[tauri::command]
pub async fn get_sampling(scope: Option<SettingsScope>, state: State<'_, AppState>) -> Result<SamplingSettings, IpcError> {
    let scope = scope.unwrap_or(SettingsScope::Global);
    Ok(SamplingSettings {
        current: state.sampling(&scope).await?,
        own: state.own_sampling(&scope).await?.is_some(),
        defaults: SamplingParams::default(),
        ranges: SamplingParams::ranges().to_vec(),
        presets: state.presets().await?,
    })
}

/// Saves sampling settings at `scope` (default: global); the next reply uses them. Out-of-range
/// values are refused with a message naming the field and its range.
#[tauri::command]
pub async fn set_sampling(
    params: SamplingParams,
    scope: Option<SettingsScope>,
    state: State<'_, AppState>,
) -> Result<SamplingParams, IpcError> {
    params.validate().map_err(|e| IpcError::new(IpcErrorKind::InvalidInput, e))?;
    state.set_sampling(&scope.unwrap_or(SettingsScope::Global), &params).await?;
    Ok(params)
}

/// Makes `scope` inherit again from the broader scopes.
#[tauri::command]
pub async fn clear_sampling(scope: SettingsScope, state: State<'_, AppState>) -> Result<(), IpcError> {
    Ok(state.clear_sampling(&scope).await?)
}

#[tauri::command]
pub async fn save_preset(name: String, params: SamplingParams, state: State<'_, AppState>) -> Result<(), IpcError> {
    params.validate().map_err(|e| IpcError::new(IpcErrorKind::InvalidInput, e))?;
    state.save_preset(&name, params).await?.map_err(|e| IpcError::new(IpcErrorKind::InvalidInput, e))
}

#[tauri::command]
pub async fn delete_preset(name: String, state: State<'_, AppState>) -> Result<(), IpcError> {
    Ok(state.delete_preset(&name).await?)
}
