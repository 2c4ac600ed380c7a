//! Picks and loads the model at start: the one the user chose last, else the default model,
//! else any GGUF file in the models folder.

use std::path::{Path, PathBuf};

use hearth_engine::EngineError;

use crate::AppState;
use crate::model_memory::{self, StartPlan};
use crate::state::saved_load_params;

/// The model scripts/fetch-model.sh installs.
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
use crate::model_memory::ACTIVE_MODEL_KEY;

pub fn load_default_model(state: &AppState) {
    let engine = state.engine.clone();
    let store = state.store.clone();
    let models_dir = state.paths.models_dir.clone();
    let settle = state.settle_model.clone();
    let problem = state.startup_problem.clone();
    tauri::async_runtime::spawn(async move {
        let chosen = store.setting(ACTIVE_MODEL_KEY).await.ok().flatten().map(PathBuf::from);
        match pick_model(chosen, &models_dir) {
            None => tracing::warn!(
                dir = %models_dir.display(),
                "no model found; run scripts/fetch-model.sh or put a .gguf file in the models folder"
            ),
            Some(path) => {
                if let Err(words) = load_at_start(&engine, &store, &path).await {
                    tracing::error!("{words}");
                    *problem.lock().expect("startup problem poisoned") = Some(words);
                }
            }
        }
        let _ = settle.send(true);
    });
}

/// Loads `path` as start-up should (known good settings, never a model in safe mode); the
/// error is the sentence the user sees.
async fn load_at_start(engine: &hearth_engine::Engine, store: &hearth_store::Store, path: &Path) -> Result<(), String> {
    let shown = path.display().to_string();
    let name = path.file_stem().map_or(shown.clone(), |s| s.to_string_lossy().into_owned());
    let saved = saved_load_params(store, &shown).await.map_err(|e| e.to_string())?;
    let params = match model_memory::start_plan(store, &shown, &name, saved).await.map_err(|e| e.to_string())? {
        StartPlan::Load(params) => params,
        StartPlan::Skip(why) => return Err(why),
    };
    match engine.load(path, params.clone()).await {
        Ok(info) => {
            if let Err(e) = model_memory::loaded_ok(store, &info).await {
                tracing::warn!(error = %e, "could not remember the loaded model");
            }
            Ok(())
        }
        Err(error) => {
            if let EngineError::Crashed { cause, .. } = &error
                && let Err(e) = model_memory::record_crash(store, &shown, &params, cause).await
            {
                tracing::warn!(error = %e, "could not remember the crash");
            }
            Err(format!("{name} could not be loaded at start: {error}"))
        }
    }
}

fn pick_model(chosen: Option<PathBuf>, models_dir: &Path) -> Option<PathBuf> {
    if let Some(path) = chosen.filter(|p| p.is_file()) {
        return Some(path);
    }
    let default = models_dir.join(DEFAULT_MODEL_FILE);
    if default.is_file() {
        return Some(default);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(models_dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "gguf") && p.is_file())
        .collect();
    found.sort();
    found.into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_chosen_then_the_default_then_any_model() {
        let dir = tempfile::tempdir().unwrap();
        let models = dir.path();
        let touch = |name: &str| {
            let p = models.join(name);
            std::fs::write(&p, b"x").unwrap();
            p
        };
        assert_eq!(pick_model(None, models), None);
        let other = touch("b-other.gguf");
        touch("notes.txt");
        assert_eq!(pick_model(None, models), Some(other.clone()));
        let default = touch(DEFAULT_MODEL_FILE);
        assert_eq!(pick_model(None, models), Some(default.clone()));
        assert_eq!(pick_model(Some(other.clone()), models), Some(other));
        assert_eq!(pick_model(Some(models.join("gone.gguf")), models), Some(default));
    }
}
