use std::path::PathBuf;

use tauri::{AppHandle, Manager, Runtime};

/// Overrides the data dir (tests, portable installs). Logs then go to `<data dir>/logs`.
pub const DATA_DIR_ENV: &str = "HEARTH_DATA_DIR";

/// Where Hearth keeps its files. scripts/data-dir.sh computes the same data dir.
#[derive(Debug, Clone)]
pub struct AppPaths {
    pub data_dir: PathBuf,
    pub models_dir: PathBuf,
    pub database: PathBuf,
    pub log_dir: PathBuf,
}

impl AppPaths {
    pub fn resolve<R: Runtime>(app: &AppHandle<R>) -> Result<AppPaths, Box<dyn std::error::Error>> {
        let paths = match std::env::var_os(DATA_DIR_ENV) {
            Some(dir) => Self::under(PathBuf::from(dir)),
            None => AppPaths { log_dir: app.path().app_log_dir()?, ..Self::under(app.path().app_data_dir()?) },
        };
        for dir in [&paths.data_dir, &paths.models_dir, &paths.log_dir] {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        Ok(paths)
    }

    /// Everything, logs included, under one folder.
    pub fn under(data_dir: PathBuf) -> AppPaths {
        AppPaths {
            models_dir: data_dir.join("models"),
            database: data_dir.join("hearth.db"),
            log_dir: data_dir.join("logs"),
            data_dir,
        }
    }
}
