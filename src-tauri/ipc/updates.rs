//! Settings → Updates and the update dialog: the check, the install with its progress, the restart.

use tauri::ipc::Channel;
use tauri::{AppHandle, Runtime, State};

use crate::AppState;
use crate::ipc::contract::command;
use crate::ipc::{IpcError, IpcErrorKind};
use crate::updates::{AvailableUpdate, UpdateError, UpdateProgress, UpdateSettings, UpdateSettingsError, UpdateStatus};

impl From<UpdateError> for IpcError {
    fn from(e: UpdateError) -> Self {
        match e {
            UpdateError::BadEndpoint { .. } | UpdateError::NoEndpoint => {
                IpcError::new(IpcErrorKind::InvalidInput, e).concerning("endpoint")
            }
            UpdateError::Unreachable { .. } | UpdateError::CutOff { .. } => IpcError::new(IpcErrorKind::Network, e),
            _ => IpcError::new(IpcErrorKind::Update, e),
        }
    }
}

impl From<UpdateSettingsError> for IpcError {
    fn from(e: UpdateSettingsError) -> Self {
        match e {
            UpdateSettingsError::Endpoint(e) => e.into(),
            UpdateSettingsError::Store(e) => e.into(),
        }
    }
}

async fn status<R: Runtime>(app: &AppHandle<R>, state: &AppState) -> Result<UpdateStatus, IpcError> {
    Ok(UpdateStatus {
        settings: UpdateSettings::read(&state.store).await?,
        enabled: state.updates.enabled(),
        current_version: app.package_info().version.to_string(),
    })
}

command! {
    /// Settings → Updates: the settings, whether this build updates itself, its version.
    pub async fn update_status<R: Runtime>(app: AppHandle<R>, state: State<'_, AppState>) -> Result<UpdateStatus, IpcError> {
        status(&app, &state).await
    }
}

command! {
    /// Saves Settings → Updates (an endpoint must be https, or http on this machine).
    pub async fn set_update_settings<R: Runtime>(settings: UpdateSettings, app: AppHandle<R>, state: State<'_, AppState>) -> Result<UpdateStatus, IpcError> {
        settings.write(&state.store).await?;
        status(&app, &state).await
    }
}

command! {
    /// Asks the endpoint for a newer version; null when this one is the newest.
    pub async fn check_update<R: Runtime>(app: AppHandle<R>, state: State<'_, AppState>) -> Result<Option<AvailableUpdate>, IpcError> {
        let settings = UpdateSettings::read(&state.store).await?;
        Ok(state.updates.check(&app, &settings.endpoint).await?)
    }
}

command! {
    /// Downloads the update found, checks its signature, installs it and restarts Hearth; the
    /// running version is untouched when any step fails.
    pub async fn install_update<R: Runtime>(on_progress: Channel<UpdateProgress>, app: AppHandle<R>, state: State<'_, AppState>) -> Result<(), IpcError> {
        state.updates.install(|p| {
            let _ = on_progress.send(p);
        }).await?;
        tracing::info!("update installed; restarting");
        crate::shutdown(&app);
        // The new process must find no Hearth holding the single-instance name, or it would hand
        // over to this one, which is leaving.
        tauri_plugin_single_instance::destroy(&app);
        app.restart();
    }
}
