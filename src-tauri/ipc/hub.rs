//! The model manager's commands: the hub (search, files, fit), downloads, the library, loading.

use std::path::{Path, PathBuf};

use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, Runtime, State};
use tauri_plugin_dialog::DialogExt;
use tokio::sync::oneshot;
use ts_rs::TS;

use hearth_core::{LoadParams, ModelInfo};
use hearth_hub::{
    Download, FitEstimate, HubError, HubRepo, ImportMode, LibraryModel, Machine, Memory, RepoQuant, StarterModel, group_quants,
};
use hearth_providers::{KeyStorage, Secret};

use crate::AppState;
use crate::ipc::contract::command;
use crate::ipc::{IpcError, IpcErrorKind};

impl From<HubError> for IpcError {
    fn from(e: HubError) -> Self {
        let kind = match e {
            HubError::Auth { .. } => IpcErrorKind::HubAuth,
            HubError::DiskFull { .. } => IpcErrorKind::DiskFull,
            HubError::BadName { .. } => IpcErrorKind::InvalidInput,
            HubError::NotFound { .. } | HubError::NoDownload { .. } | HubError::NotInLibrary { .. } => IpcErrorKind::NotFound,
            HubError::Network { .. } => IpcErrorKind::Network,
            HubError::Gguf(_) | HubError::Io { .. } => IpcErrorKind::File,
            _ => IpcErrorKind::Download,
        };
        IpcError::new(kind, e)
    }
}

command! {
    pub async fn hub_search(query: String, state: State<'_, AppState>) -> Result<Vec<HubRepo>, IpcError> {
        Ok(state.hub.search(&query, 30).await?)
    }
}

command! {
    pub async fn hub_repo_files(repo: String, state: State<'_, AppState>) -> Result<Vec<RepoQuant>, IpcError> {
        Ok(group_quants(&state.hub.repo_files(&repo).await?))
    }
}

command! {
    /// Will `file` (a quantization's first part) run here at `context_length` tokens (its own when
    /// null)? Read from its header over range requests, before any download.
    pub async fn hub_fit(repo: String, file: String, context_length: Option<u32>, state: State<'_, AppState>) -> Result<FitEstimate, IpcError> {
        let files = state.hub.repo_files(&repo).await?;
        let quants = group_quants(&files);
        let quant = quants.iter().find(|q| q.files.first() == Some(&file)).ok_or_else(|| IpcError::from(HubError::NotFound { what: format!("{file} in {repo}") }))?;
        let entry = files.iter().find(|f| f.path == file).expect("a grouped file is listed");
        let header = state.hub.header(&repo, entry).await?;
        let shape = header.shape().ok_or_else(|| {
            IpcError::new(IpcErrorKind::InvalidInput, format!("{file}'s metadata does not describe its layers and heads, so its memory cannot be estimated"))
        })?;
        let kv = LoadParams::default().kv_cache_type;
        let memory = Memory { free_vram: state.engine.devices().await.gpu_free_bytes(), ..hearth_hub::fit::available_memory() };
        Ok(hearth_hub::fit::estimate(header.facts(), &shape, quant.size_bytes, context_length, kv, memory))
    }
}

command! {
    /// The model the welcome screen offers a new user: the largest this machine runs well
    /// (`hearth_hub::starter`). Its files and fit come from the hub, as any other's.
    pub async fn starter_model(state: State<'_, AppState>) -> Result<StarterModel, IpcError> {
        Ok(hearth_hub::starter(&Machine::here(state.engine.devices().await.gpu_free_bytes())))
    }
}

command! {
    pub async fn start_download(repo: String, quant: String, files: Vec<String>, state: State<'_, AppState>) -> Result<Download, IpcError> {
        Ok(state.downloads.start(&repo, &quant, &files).await?)
    }
}

command! {
    pub fn list_downloads(state: State<'_, AppState>) -> Vec<Download> {
        state.downloads.list()
    }
}

command! {
    /// Sends every change of every download to `on_update`.
    pub fn watch_downloads(on_update: Channel<Download>, state: State<'_, AppState>) {
        state.downloads.watch(move |d| {
            let _ = on_update.send(d.clone());
        });
    }
}

command! {
    pub fn pause_download(id: String, state: State<'_, AppState>) -> Result<Download, IpcError> {
        Ok(state.downloads.pause(&id)?)
    }
}

command! {
    pub fn resume_download(id: String, state: State<'_, AppState>) -> Result<Download, IpcError> {
        Ok(state.downloads.resume(&id)?)
    }
}

command! {
    pub fn cancel_download(id: String, state: State<'_, AppState>) -> Result<(), IpcError> {
        Ok(state.downloads.cancel(&id)?)
    }
}

fn loaded_path(state: &AppState) -> Option<PathBuf> {
    state.models.loaded_path().map(PathBuf::from)
}

command! {
    pub async fn list_library(state: State<'_, AppState>) -> Result<Vec<LibraryModel>, IpcError> {
        let library = state.library.clone();
        let loaded = loaded_path(&state);
        tokio::task::spawn_blocking(move || library.list(loaded.as_deref()))
            .await
            .map_err(|e| IpcError::new(IpcErrorKind::File, e))
    }
}

command! {
    pub async fn import_model(path: String, mode: ImportMode, state: State<'_, AppState>) -> Result<LibraryModel, IpcError> {
        let library = state.library.clone();
        tokio::task::spawn_blocking(move || library.import(Path::new(&path), mode))
            .await
            .map_err(|e| IpcError::new(IpcErrorKind::File, e))?
            .map_err(IpcError::from)
    }
}

command! {
    /// Asks for a GGUF file in the system's open dialog, then imports it; null when cancelled.
    pub async fn import_model_dialog<R: Runtime>(mode: ImportMode, app: AppHandle<R>, state: State<'_, AppState>) -> Result<Option<LibraryModel>, IpcError> {
        let (tx, rx) = oneshot::channel();
        app.dialog()
            .file()
            .set_title("Import a GGUF model")
            .add_filter("GGUF model", &["gguf"])
            .pick_file(move |path| {
                let _ = tx.send(path.and_then(|p| p.into_path().ok()));
            });
        let Some(path) = rx.await.ok().flatten() else { return Ok(None) };
        import_model(path.display().to_string(), mode, state).await.map(Some)
    }
}

command! {
    pub async fn delete_model(path: String, state: State<'_, AppState>) -> Result<(), IpcError> {
        if loaded_path(&state).as_deref() == Some(Path::new(&path)) {
            return Err(IpcError::new(IpcErrorKind::Busy, "this model is loaded: unload it or load another one first"));
        }
        // Kept in memory after another model was loaded: its pages would hold the disk space.
        state.engine.release_model(Path::new(&path));
        let library = state.library.clone();
        tokio::task::spawn_blocking(move || library.delete(Path::new(&path)))
            .await
            .map_err(|e| IpcError::new(IpcErrorKind::File, e))?
            .map_err(IpcError::from)
    }
}

command! {
    /// Shows the model's folder in the system's file manager.
    pub fn reveal_model(path: String, state: State<'_, AppState>) -> Result<(), IpcError> {
        let path = PathBuf::from(path);
        if !state.library.list(None).iter().any(|m| Path::new(&m.path) == path) {
            return Err(HubError::NotInLibrary { path: path.display().to_string() }.into());
        }
        let folder = path.parent().unwrap_or(&path).to_path_buf();
        crate::ipc::open_with_system(folder.as_os_str()).map_err(|e| IpcError::new(IpcErrorKind::File, format!("could not open {}: {e}", folder.display())))
    }
}

command! {
    /// Loads `path` with its saved load settings, reporting llama.cpp's progress (0 to 1). When
    /// llama.cpp cannot load it, the previous model is loaded again and the error says so.
    pub async fn load_model(path: String, on_progress: Channel<f32>, state: State<'_, AppState>) -> Result<ModelInfo, IpcError> {
        Ok(state.models.load(&path, crate::ipc::models::progress_to(on_progress)).await?)
    }
}

command! {
    /// Gives up the load under way, if any; `load_model` then answers that it was cancelled (and
    /// the model loaded before it is loaded again).
    pub fn cancel_load(state: State<'_, AppState>) -> bool {
        state.models.cancel_load()
    }
}

command! {
    pub async fn unload_model(state: State<'_, AppState>) -> Result<(), IpcError> {
        Ok(state.models.unload().await?)
    }
}

/// Whether a Hugging Face token is saved, and where.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HubTokenStatus {
    pub stored: bool,
    pub storage: Option<KeyStorage>,
}

command! {
    pub fn hub_token_status(state: State<'_, AppState>) -> Result<HubTokenStatus, IpcError> {
        let storage = state.keys.location(Secret::HubToken)?;
        Ok(HubTokenStatus { stored: storage.is_some(), storage })
    }
}

command! {
    /// Saves the token (null or empty: forgets it) and uses it from now on.
    pub fn set_hub_token(token: Option<String>, state: State<'_, AppState>) -> Result<HubTokenStatus, IpcError> {
        let token = token.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
        match &token {
            Some(token) => drop(state.keys.set(Secret::HubToken, token)?),
            None => state.keys.delete(Secret::HubToken)?,
        }
        state.hub.set_token(token.as_deref())?;
        hub_token_status(state)
    }
}
