use std::sync::Arc;

use tokio::sync::watch;

use hearth_core::{ChatService, SamplingParams};
use hearth_engine::Engine;
use hearth_store::Store;

use crate::AppPaths;

/// Settings key of the global sampling settings (JSON).
const SAMPLING_KEY: &str = "sampling";

/// Everything the commands need, managed by Tauri.
pub struct AppState {
    pub paths: AppPaths,
    pub chat: ChatService<Engine, Store>,
    pub engine: Engine,
    pub store: Store,
    /// True once the start-up model load has finished (whatever its outcome).
    model_settled: watch::Receiver<bool>,
    pub(crate) settle_model: watch::Sender<bool>,
}

impl AppState {
    pub async fn open(paths: AppPaths) -> Result<AppState, hearth_store::StoreError> {
        let store = Store::open(&paths.database).await?;
        let engine = Engine::spawn();
        let chat = ChatService::new(Arc::new(engine.clone()), Arc::new(store.clone()));
        let (settle_model, model_settled) = watch::channel(false);
        Ok(AppState { paths, chat, engine, store, model_settled, settle_model })
    }

    /// The global sampling settings (defaults until the user saves some).
    pub async fn sampling(&self) -> Result<SamplingParams, hearth_store::StoreError> {
        let saved = self.store.setting(SAMPLING_KEY).await?;
        // Settings saved by another version may not parse or validate; defaults are then safer.
        Ok(saved
            .and_then(|json| serde_json::from_str::<SamplingParams>(&json).ok())
            .filter(|p| p.validate().is_ok())
            .unwrap_or_default())
    }

    pub async fn set_sampling(&self, params: &SamplingParams) -> Result<(), hearth_store::StoreError> {
        let json = serde_json::to_string(params).expect("SamplingParams serializes");
        self.store.set_setting(SAMPLING_KEY, &json).await
    }

    /// Waits until the start-up model load is over, so the first message does not race it.
    pub async fn model_settled(&self) {
        let mut settled = self.model_settled.clone();
        let _ = settled.wait_for(|done| *done).await;
    }
}
