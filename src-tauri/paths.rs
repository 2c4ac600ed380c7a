use std::path::PathBuf;

use tauri::{AppHandle, Manager, Runtime};

use hearth_app::AppPaths;

/// Overrides the data dir (tests, portable installs). Logs then go to `<data dir>/logs`.
pub const DATA_DIR_ENV: &str = "HEARTH_DATA_DIR";

/// Where Hearth keeps its files, created: the platform's app data and log folders, or everything
/// under `HEARTH_DATA_DIR`. scripts/data-dir.sh computes the same data dir.
pub fn resolve<R: Runtime>(app: &AppHandle<R>) -> Result<AppPaths, Box<dyn std::error::Error>> {
    let paths = match std::env::var_os(DATA_DIR_ENV) {
        Some(dir) => AppPaths::under(PathBuf::from(dir)),
        None => AppPaths { log_dir: app.path().app_log_dir()?, ..AppPaths::under(app.path().app_data_dir()?) },
    };
    for dir in [&paths.data_dir, &paths.models_dir, &paths.log_dir] {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    Ok(paths)
}
