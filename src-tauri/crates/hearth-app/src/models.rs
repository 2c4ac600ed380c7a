//! Which local model is loaded, and what a load does around the engine: it uses the model's
//! saved settings (or the defaults while they put it in safe mode), it is remembered (the
//! active model, known good settings, crashes), and when llama.cpp cannot load it the model
//! loaded before is loaded again, so the user keeps a working one.
//!
//! At start the model the user loaded last is loaded, else the default model, else any GGUF
//! file in the models folder.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use hearth_core::{CancelFlag, LoadParams, ModelInfo, ReasoningFormat, model_name, reasoning_format};
use hearth_engine::{Engine, EngineError};
use hearth_store::{Store, StoreError};

use crate::Settings;
use crate::model_memory::{self, ACTIVE_MODEL_KEY, StartPlan};

/// The model scripts/fetch-model.sh installs.
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("no model is loaded")]
    NoModel,
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The file was refused before llama.cpp saw it; the loaded model (if any) stays.
    #[error(transparent)]
    File(EngineError),
    /// llama.cpp did not load it; `restored` says what became of the model loaded before.
    #[error("{error}{}", restored.as_ref().map(|r| format!("; {r}")).unwrap_or_default())]
    Failed { error: EngineError, restored: Option<String> },
}

/// The loaded model and the loads the user asks for.
#[derive(Clone)]
pub struct Models {
    engine: Engine,
    store: Store,
    settings: Settings,
    shared: Arc<Shared>,
    settled: watch::Receiver<bool>,
}

struct Shared {
    /// What the app (not the engine) has to say about the loaded model, e.g. that safe mode
    /// loaded it with default settings; replaced at each load.
    notice: Mutex<Option<String>>,
    /// The cancel flag of the load under way.
    cancel: Mutex<Option<CancelFlag>>,
    /// Why the start-up load did not happen or failed, in words; cleared by the next load.
    startup_problem: Mutex<Option<String>>,
    settle: watch::Sender<bool>,
}

impl Models {
    pub fn new(engine: Engine, store: Store) -> Self {
        let (settle, settled) = watch::channel(false);
        let shared = Shared { notice: Mutex::default(), cancel: Mutex::default(), startup_problem: Mutex::default(), settle };
        Models { engine, settings: Settings::new(store.clone()), store, shared: Arc::new(shared), settled }
    }

    /// The loaded model with the app's notice about it, if any (the engine's own comes second).
    pub fn loaded(&self) -> Option<ModelInfo> {
        let mut model = self.engine.loaded()?;
        if let Some(notice) = self.shared.notice.lock().expect("notice poisoned").clone() {
            model.notice = Some(match model.notice {
                Some(engine) => format!("{notice}; {engine}"),
                None => notice,
            });
        }
        Some(model)
    }

    /// The loaded model's file, if one is loaded.
    pub fn loaded_path(&self) -> Option<String> {
        self.engine.loaded().map(|m| m.path)
    }

    /// How the model at `path` reasons: by the template its load settings choose, else by the
    /// one in its file. `None` when neither can be read (the file is gone or damaged).
    pub async fn reasoning_format(&self, path: &str) -> Option<ReasoningFormat> {
        if let Some(chosen) = self.settings.load_params(path).await.ok().and_then(|p| p.chat_template) {
            return Some(reasoning_format(&chosen));
        }
        let path = PathBuf::from(path);
        let header = tokio::task::spawn_blocking(move || hearth_gguf::validate(&path)).await.ok()?;
        header.ok().map(|file| file.facts().reasoning)
    }

    /// Why the start-up load did not happen or failed, while no model is loaded.
    pub fn startup_problem(&self) -> Option<String> {
        if self.engine.loaded().is_some() {
            return None;
        }
        self.shared.startup_problem.lock().expect("startup problem poisoned").clone()
    }

    /// Says `problem` where a failed start-up load is said (the window's banner at start).
    pub fn note_startup_problem(&self, problem: String) {
        tracing::warn!("{problem}");
        *self.shared.startup_problem.lock().expect("startup problem poisoned") = Some(problem);
    }

    /// Waits until the start-up load is over, so the first message does not race it.
    pub async fn settled(&self) {
        let mut settled = self.settled.clone();
        let _ = settled.wait_for(|done| *done).await;
    }

    /// Loads `path` with its saved settings, telling `progress` how far llama.cpp got (0 to 1).
    /// `cancel_load` gives it up. On failure the model loaded before is loaded again.
    pub async fn load(&self, path: &str, progress: impl FnMut(f32) + Send + 'static) -> Result<ModelInfo, LoadError> {
        let saved = self.settings.load_params(path).await?;
        let (params, safe) = model_memory::user_load_params(&self.store, path, &model_name(path), saved).await?;
        let previous = self.engine.loaded();
        let cancel = self.begin_load();
        let result = self.engine.load_with_progress(Path::new(path), params.clone(), progress, cancel).await;
        self.shared.cancel.lock().expect("cancel poisoned").take();
        self.finish_load(path, &params, result, previous, safe).await
    }

    /// Loads the loaded model again with its saved settings (they apply at a load).
    pub async fn reload(&self) -> Result<ModelInfo, LoadError> {
        let previous = self.engine.loaded().ok_or(LoadError::NoModel)?;
        let path = previous.path.clone();
        let params = self.settings.load_params(&path).await?;
        let result = self.engine.load(Path::new(&path), params.clone()).await;
        self.finish_load(&path, &params, result, Some(previous), None).await
    }

    /// Remembers a load's outcome; on failure loads `previous` (the model loaded before) again.
    async fn finish_load(
        &self,
        path: &str,
        params: &LoadParams,
        result: Result<ModelInfo, EngineError>,
        previous: Option<ModelInfo>,
        notice: Option<String>,
    ) -> Result<ModelInfo, LoadError> {
        self.remember(path, params, &result).await;
        let error = match result {
            Ok(model) => {
                *self.shared.notice.lock().expect("notice poisoned") = notice;
                return Ok(self.loaded().unwrap_or(model));
            }
            Err(error @ EngineError::InvalidFile(_)) => return Err(LoadError::File(error)),
            Err(error) => error,
        };
        let Some(previous) = previous else { return Err(LoadError::Failed { error, restored: None }) };
        let restored = self.engine.load(Path::new(&previous.path), previous.load.clone()).await;
        let what = if previous.path == path { "the model".to_owned() } else { previous.name.clone() };
        let restored = match (restored, previous.path == path) {
            (Ok(_), true) => "the model was loaded again with its previous settings".to_owned(),
            (Ok(_), false) => format!("{what} is loaded again"),
            (Err(_), _) => format!("{what} could not be loaded again either; choose other settings and load it"),
        };
        Err(LoadError::Failed { error, restored: Some(restored) })
    }

    /// A load finished: remember it (active model, known good settings) and forget a start-up
    /// problem; a crash while loading is remembered for safe mode.
    async fn remember(&self, path: &str, params: &LoadParams, result: &Result<ModelInfo, EngineError>) {
        let remembered = match result {
            Ok(info) => {
                *self.shared.startup_problem.lock().expect("startup problem poisoned") = None;
                model_memory::loaded_ok(&self.store, info).await
            }
            Err(EngineError::Crashed { cause, .. }) => model_memory::record_crash(&self.store, path, params, cause).await,
            Err(_) => Ok(()),
        };
        if let Err(e) = remembered {
            tracing::warn!(error = %e, "could not remember the load");
        }
    }

    fn begin_load(&self) -> CancelFlag {
        let flag = CancelFlag::new();
        *self.shared.cancel.lock().expect("cancel poisoned") = Some(flag.clone());
        flag
    }

    /// Gives up the load under way; false if none is.
    pub fn cancel_load(&self) -> bool {
        match self.shared.cancel.lock().expect("cancel poisoned").take() {
            Some(flag) => {
                flag.cancel();
                true
            }
            None => false,
        }
    }

    pub async fn unload(&self) -> Result<(), EngineError> {
        *self.shared.notice.lock().expect("notice poisoned") = None;
        self.engine.unload().await
    }

    /// Loads the model start-up should load, from `models_dir` unless the user chose one; marks
    /// the start-up load settled whatever happens.
    pub async fn load_at_start(&self, models_dir: &Path) {
        let chosen = self.store.setting(ACTIVE_MODEL_KEY).await.ok().flatten().map(PathBuf::from);
        match pick_model(chosen, models_dir) {
            None => tracing::warn!(
                dir = %models_dir.display(),
                "no model found; run scripts/fetch-model.sh or put a .gguf file in the models folder"
            ),
            Some(path) => {
                if let Err(problem) = self.start_with(&path).await {
                    tracing::error!("{problem}");
                    *self.shared.startup_problem.lock().expect("startup problem poisoned") = Some(problem.to_string());
                }
            }
        }
        let _ = self.shared.settle.send(true);
    }

    /// Loads `path` as start-up should (known good settings, never a model in safe mode).
    async fn start_with(&self, path: &Path) -> Result<(), StartProblem> {
        let shown = path.display().to_string();
        let name = model_name(&shown);
        let saved = self.settings.load_params(&shown).await?;
        let params = match model_memory::start_plan(&self.store, &shown, &name, saved).await? {
            StartPlan::Load(params) => params,
            StartPlan::Skip(why) => return Err(StartProblem::SafeMode(why)),
        };
        let result = self.engine.load(path, params.clone()).await;
        self.remember(&shown, &params, &result).await;
        result.map(drop).map_err(|error| StartProblem::Failed { name, error })
    }
}

/// Why the start-up load did not happen or failed; its words are what the user sees.
#[derive(Debug, thiserror::Error)]
enum StartProblem {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Safe mode: the sentence says which file, which settings and what to do.
    #[error("{0}")]
    SafeMode(String),
    #[error("{name} could not be loaded at start: {error}")]
    Failed { name: String, error: EngineError },
}

/// The model the user chose, else the default model, else the first GGUF file by name.
pub fn pick_model(chosen: Option<PathBuf>, models_dir: &Path) -> Option<PathBuf> {
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
        // A vision model's projector is loaded beside it, never chatted with.
        .filter(|p| !p.file_name().and_then(|n| n.to_str()).is_some_and(hearth_gguf::is_projector_name))
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
        touch("a-mmproj.gguf.txt");
        touch("mmproj-a-vision-f16.gguf");
        assert_eq!(pick_model(None, models), None, "a projector is no model");
        let other = touch("b-other.gguf");
        touch("notes.txt");
        assert_eq!(pick_model(None, models), Some(other.clone()));
        let default = touch(DEFAULT_MODEL_FILE);
        assert_eq!(pick_model(None, models), Some(default.clone()));
        assert_eq!(pick_model(Some(other.clone()), models), Some(other));
        assert_eq!(pick_model(Some(models.join("gone.gguf")), models), Some(default));
    }
}
