use serde::Serialize;
use tauri::State;
use ts_rs::TS;

use hearth_core::{FieldRange, Preset, SamplingParams};

use crate::AppState;
use crate::ipc::{IpcError, IpcErrorKind};

/// What the settings panel needs: the values in force, the defaults, and the ranges the backend
/// enforces.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SamplingSettings {
    pub current: SamplingParams,
    pub defaults: SamplingParams,
    pub ranges: Vec<FieldRange>,
    /// Built-in presets.
    pub presets: Vec<Preset>,
}

#[tauri::command]
pub async fn get_sampling(state: State<'_, AppState>) -> Result<SamplingSettings, IpcError> {
    Ok(SamplingSettings {
        current: state.sampling().await?,
        defaults: SamplingParams::default(),
        ranges: SamplingParams::ranges().to_vec(),
        presets: SamplingParams::presets(),
    })
}

/// Saves the global sampling settings; the next reply uses them. Out-of-range values are refused
/// with a message naming the field and its range.
#[tauri::command]
pub async fn set_sampling(params: SamplingParams, state: State<'_, AppState>) -> Result<SamplingParams, IpcError> {
    params.validate().map_err(|e| IpcError::new(IpcErrorKind::InvalidInput, e))?;
    state.set_sampling(&params).await?;
    Ok(params)
}
