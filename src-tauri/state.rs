use std::sync::Arc;

use tokio::sync::watch;

use hearth_core::{ChatService, LoadParams, Preset, ProviderConfig, ProviderKind, SamplingParams, SettingsScope, Switch};
use hearth_engine::Engine;
use hearth_hub::{Downloads, Hub, HubCache, HubConfig, Library, RetryPolicy};
use hearth_providers::{HubOptions, KeySource, KeyStore, Providers, Timeouts};
use hearth_store::{Store, StoreError};

use crate::AppPaths;

/// Settings key of the user's presets (JSON list).
const PRESETS_KEY: &str = "presets";
/// Settings key of the configured providers (JSON list; keys are in the keychain, not here).
const PROVIDERS_KEY: &str = "providers";

/// The keychain entry of the Hugging Face token (beside the providers' keys).
pub const HUB_TOKEN_KEY: &str = "huggingface-hub";

/// Where replies come from: the local engine or a remote provider, by the chat's target.
pub type Backend = Switch<Engine, Providers>;

/// Settings key of one model file's load settings.
fn load_key(model_path: &str) -> String {
    format!("load:model:{model_path}")
}

/// The load settings saved for `model_path`; defaults when none are saved or they no longer
/// parse or validate (saved by another version).
pub async fn saved_load_params(store: &Store, model_path: &str) -> Result<LoadParams, StoreError> {
    let saved = store.setting(&load_key(model_path)).await?;
    Ok(saved
        .and_then(|json| serde_json::from_str::<LoadParams>(&json).ok())
        .filter(|p| p.validate().is_ok())
        .unwrap_or_default())
}

/// The saved providers; OpenAI and Anthropic (without keys) on first start, so a user only has
/// to paste a key.
async fn saved_providers(store: &Store) -> Result<Vec<ProviderConfig>, StoreError> {
    let saved = store.setting(PROVIDERS_KEY).await?;
    if let Some(configs) = saved.and_then(|json| serde_json::from_str::<Vec<ProviderConfig>>(&json).ok()) {
        return Ok(configs);
    }
    Ok(vec![
        ProviderConfig::new("openai", "OpenAI", ProviderKind::OpenAi),
        ProviderConfig::new("anthropic", "Anthropic", ProviderKind::Anthropic),
    ])
}

/// Everything the commands need, managed by Tauri.
pub struct AppState {
    pub paths: AppPaths,
    pub chat: ChatService<Backend, Store>,
    pub engine: Engine,
    pub providers: Providers,
    pub keys: Arc<KeyStore>,
    pub store: Store,
    /// Hugging Face (or `HF_ENDPOINT`), with the token kept in the keychain.
    pub hub: Hub,
    pub downloads: Downloads,
    pub library: Library,
    pub watchers: crate::titles::ChatWatchers,
    /// What the app (not the engine) has to say about the loaded model, e.g. that safe mode
    /// loaded it with default settings; replaced at each load.
    load_notice: std::sync::Mutex<Option<String>>,
    /// The cancel flag of the load the window asked for, while it runs.
    load_cancel: std::sync::Mutex<Option<hearth_core::CancelFlag>>,
    /// Why the start-up load did not happen or failed, in words; cleared by the next load.
    pub(crate) startup_problem: Arc<std::sync::Mutex<Option<String>>>,
    /// True once the start-up model load has finished (whatever its outcome).
    model_settled: watch::Receiver<bool>,
    pub(crate) settle_model: watch::Sender<bool>,
}

impl AppState {
    pub async fn open(paths: AppPaths) -> Result<AppState, Box<dyn std::error::Error>> {
        let store = Store::open(&paths.database).await?;
        let engine = Engine::spawn();
        let keys = Arc::new(KeyStore::new(paths.data_dir.join("keys.json")));
        // The hub (for remote models' tokenizers) honours HF_ENDPOINT and the standard cache.
        let providers = Providers::new(keys.clone(), Timeouts::default(), &HubOptions::default());
        providers.set_configs(saved_providers(&store).await?);
        let backend = Switch::new(Arc::new(engine.clone()), Arc::new(providers.clone()));
        let chat = ChatService::new(Arc::new(backend), Arc::new(store.clone()));
        let (settle_model, model_settled) = watch::channel(false);
        // The hub honours HF_ENDPOINT; models go to the standard Hugging Face cache.
        let token = keys.key(HUB_TOKEN_KEY).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the Hugging Face token could not be read");
            None
        });
        let hub = Hub::new(&HubConfig { endpoint: None, token })?;
        let cache = HubCache::new(HubCache::default_root());
        let downloads = Downloads::new(hub.clone(), cache.clone(), paths.data_dir.join("downloads.json"), RetryPolicy::default());
        let library = Library::new(cache, paths.models_dir.clone(), paths.data_dir.join("imports.json"));
        Ok(AppState {
            paths,
            chat,
            engine,
            providers,
            keys,
            store,
            hub,
            downloads,
            library,
            watchers: Default::default(),
            model_settled,
            settle_model,
            startup_problem: Arc::default(),
            load_notice: Default::default(),
            load_cancel: Default::default(),
        })
    }

    /// Saves the provider list and puts it in force.
    pub async fn set_providers(&self, configs: Vec<ProviderConfig>) -> Result<(), StoreError> {
        let json = serde_json::to_string(&configs).expect("provider configs serialize");
        self.store.set_setting(PROVIDERS_KEY, &json).await?;
        self.providers.set_configs(configs);
        Ok(())
    }

    /// The settings saved at `scope` itself, if any. Settings that no longer parse or validate
    /// (saved by another version) count as none: defaults are safer than a guess.
    pub async fn own_sampling(&self, scope: &SettingsScope) -> Result<Option<SamplingParams>, StoreError> {
        let saved = self.store.setting(&scope.key()).await?;
        Ok(saved
            .and_then(|json| serde_json::from_str::<SamplingParams>(&json).ok())
            .filter(|p| p.validate().is_ok()))
    }

    /// The settings in force at `scope`: its own, else the nearest broader scope's, else defaults.
    /// A chat inherits from the model loaded now.
    pub async fn sampling(&self, scope: &SettingsScope) -> Result<SamplingParams, StoreError> {
        let model = self.engine.loaded().map(|m| m.path);
        for candidate in scope.lookup_order(model.as_deref()) {
            if let Some(params) = self.own_sampling(&candidate).await? {
                return Ok(params);
            }
        }
        Ok(SamplingParams::default())
    }

    pub async fn set_sampling(&self, scope: &SettingsScope, params: &SamplingParams) -> Result<(), StoreError> {
        let json = serde_json::to_string(params).expect("SamplingParams serializes");
        self.store.set_setting(&scope.key(), &json).await
    }

    /// Drops `scope`'s own settings; it inherits again.
    pub async fn clear_sampling(&self, scope: &SettingsScope) -> Result<(), StoreError> {
        self.store.delete_setting(&scope.key()).await
    }

    /// Built-in presets, then the user's.
    pub async fn presets(&self) -> Result<Vec<Preset>, StoreError> {
        let mut presets = SamplingParams::presets();
        presets.extend(self.user_presets().await?);
        Ok(presets)
    }

    async fn user_presets(&self) -> Result<Vec<Preset>, StoreError> {
        let saved = self.store.setting(PRESETS_KEY).await?;
        Ok(saved.and_then(|json| serde_json::from_str(&json).ok()).unwrap_or_default())
    }

    /// Saves (or replaces) a user preset. Built-in names are taken.
    pub async fn save_preset(&self, name: &str, params: SamplingParams) -> Result<Result<(), String>, StoreError> {
        let name = name.trim();
        if name.is_empty() || SamplingParams::presets().iter().any(|p| p.name.eq_ignore_ascii_case(name)) {
            return Ok(Err(format!("choose another name: {name:?} is empty or a built-in preset")));
        }
        let mut presets = self.user_presets().await?;
        presets.retain(|p| p.name != name);
        presets.push(Preset { name: name.to_owned(), params, built_in: false });
        self.store.set_setting(PRESETS_KEY, &serde_json::to_string(&presets).expect("presets serialize")).await?;
        Ok(Ok(()))
    }

    pub async fn delete_preset(&self, name: &str) -> Result<(), StoreError> {
        let mut presets = self.user_presets().await?;
        presets.retain(|p| p.name != name);
        self.store.set_setting(PRESETS_KEY, &serde_json::to_string(&presets).expect("presets serialize")).await
    }

    pub async fn load_params(&self, model_path: &str) -> Result<LoadParams, StoreError> {
        saved_load_params(&self.store, model_path).await
    }

    /// Saves `model_path`'s load settings; they apply at its next load.
    pub async fn set_load_params(&self, model_path: &str, params: &LoadParams) -> Result<(), StoreError> {
        let json = serde_json::to_string(params).expect("LoadParams serializes");
        self.store.set_setting(&load_key(model_path), &json).await
    }

    /// A load through the window finished: remember it (active model, known good settings) and
    /// forget a start-up problem; a crash while loading is remembered for safe mode.
    pub async fn after_load(&self, path: &str, params: &LoadParams, result: &Result<hearth_core::ModelInfo, hearth_engine::EngineError>) {
        let remembered = match result {
            Ok(info) => {
                *self.startup_problem.lock().expect("startup problem poisoned") = None;
                crate::model_memory::loaded_ok(&self.store, info).await
            }
            Err(hearth_engine::EngineError::Crashed { cause, .. }) => crate::model_memory::record_crash(&self.store, path, params, cause).await,
            Err(_) => Ok(()),
        };
        if let Err(e) = remembered {
            tracing::warn!(error = %e, "could not remember the load");
        }
    }

    /// A load through the window starts: the flag `cancel_load` raises.
    pub fn begin_load(&self) -> hearth_core::CancelFlag {
        let flag = hearth_core::CancelFlag::new();
        *self.load_cancel.lock().expect("load cancel poisoned") = Some(flag.clone());
        flag
    }

    /// The load the window asked for is over (whatever its outcome).
    pub fn end_load(&self) {
        *self.load_cancel.lock().expect("load cancel poisoned") = None;
    }

    /// Raises the flag of the load under way; false if none is.
    pub fn cancel_load(&self) -> bool {
        match self.load_cancel.lock().expect("load cancel poisoned").take() {
            Some(flag) => {
                flag.cancel();
                true
            }
            None => false,
        }
    }

    pub fn set_load_notice(&self, notice: Option<String>) {
        *self.load_notice.lock().expect("load notice poisoned") = notice;
    }

    /// `model` with the app's notice about it, if any (the engine's own comes second).
    pub fn with_load_notice(&self, mut model: hearth_core::ModelInfo) -> hearth_core::ModelInfo {
        if let Some(notice) = self.load_notice.lock().expect("load notice poisoned").clone() {
            model.notice = Some(match model.notice {
                Some(engine) => format!("{notice}; {engine}"),
                None => notice,
            });
        }
        model
    }

    /// Why the start-up load did not happen or failed, while no model is loaded.
    pub fn startup_problem(&self) -> Option<String> {
        if self.engine.loaded().is_some() {
            return None;
        }
        self.startup_problem.lock().expect("startup problem poisoned").clone()
    }

    /// Waits until the start-up model load is over, so the first message does not race it.
    pub async fn model_settled(&self) {
        let mut settled = self.model_settled.clone();
        let _ = settled.wait_for(|done| *done).await;
    }
}
