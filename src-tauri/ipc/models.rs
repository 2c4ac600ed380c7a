use tauri::State;

use hearth_core::ModelInfo;

use crate::AppState;

/// The loaded model, once the start-up load has settled; `None` if there is none.
#[tauri::command]
pub async fn active_model(state: State<'_, AppState>) -> Result<Option<ModelInfo>, ()> {
    state.model_settled().await;
    Ok(state.engine.loaded())
}
