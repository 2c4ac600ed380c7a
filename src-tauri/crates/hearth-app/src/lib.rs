//! What the Hearth app decides, without Tauri: the settings the user saves (sampling per scope,
//! presets, providers, load settings), which model loads at start and what a failed load
//! restores, and chat titles. The desktop shell wires it into a window; `hearth-cli` uses the
//! same rules headless, so a chat behaves the same in both.

pub mod agent;
pub mod attachments;
mod chat_model;
pub mod log_file;
pub mod mcp_sign_in;
mod meaning;
pub mod model_memory;
mod models;
pub mod opened_files;
mod server;
mod server_models;
mod settings;
mod titles;
mod tool_questions;
mod tool_servers;
pub mod window_pace;

use std::path::PathBuf;
use std::sync::Arc;

use hearth_core::{CacheBudgets, ChatService, FieldError, SamplingParams, SettingsScope, Switch};
use hearth_engine::{Engine, HostProgram};
use hearth_hub::{Downloads, Hub, HubCache, HubConfig, Library, RetryPolicy};
use hearth_providers::{HubOptions, KeyStore, Providers, Secret, Timeouts};
use hearth_store::{Store, StoreError};

use crate::server_models::ServerModels;

pub use chat_model::{ChatModelError, IDLE_CHECK, ModelLoading};
pub use meaning::{EmbeddingModel, EmbeddingModelError};
pub use models::{DEFAULT_MODEL_FILE, LoadError, Models, pick_model};
pub use server::{ServerControl, ServerSettings, ServerStatus};
pub use settings::{ResolvedSampling, Settings, SettingsError, default_providers};
pub use titles::title_chat;
pub use tool_questions::{PendingQuestion, ToolQuestions};
pub use tool_servers::ToolServers;

/// The folder under the data dir where chats' KV caches are kept.
pub const KV_CACHE_DIR: &str = "kv-cache";

/// Where replies come from: the local engine or a remote provider, by the chat's target.
pub type Backend = Switch<Engine, Providers>;

/// Where Hearth keeps its files.
#[derive(Debug, Clone)]
pub struct AppPaths {
    pub data_dir: PathBuf,
    pub models_dir: PathBuf,
    pub database: PathBuf,
    pub log_dir: PathBuf,
}

impl AppPaths {
    /// Everything, logs included, under one folder.
    pub fn under(data_dir: PathBuf) -> AppPaths {
        AppPaths { models_dir: data_dir.join("models"), database: data_dir.join("hearth.db"), log_dir: data_dir.join("logs"), data_dir }
    }
}

/// What chats' KV caches take, in RAM and on disk, and the budgets they are kept within; beside
/// them, what the loaded model itself takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ChatCacheUsage {
    /// Bytes of state files on disk.
    #[ts(type = "number")]
    pub bytes: u64,
    /// State files: one per chat and model.
    pub chats: u32,
    /// Bytes of other chats' caches the engine keeps in RAM (the answering chat's is in the model's context).
    #[ts(type = "number")]
    pub ram_bytes: u64,
    pub budgets: CacheBudgets,
    /// The loaded model's weights (its file, mapped into memory; 0 when none is loaded).
    #[ts(type = "number")]
    pub model_bytes: u64,
    /// The loaded model's context: its KV cache, allocated in full at load (0 when none).
    #[ts(type = "number")]
    pub context_bytes: u64,
    /// Weights of models kept in memory after another was loaded, so switching back is quick.
    #[ts(type = "number")]
    pub kept_model_bytes: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Hub(#[from] hearth_hub::HubError),
    #[error(transparent)]
    Settings(#[from] SettingsError),
}

/// The app's parts, opened on one data dir.
pub struct App {
    pub paths: AppPaths,
    pub chat: ChatService<Backend, Store>,
    pub engine: Engine,
    pub providers: Providers,
    pub keys: Arc<KeyStore>,
    pub store: Store,
    pub settings: Settings,
    pub models: Models,
    /// Hugging Face (or `HF_ENDPOINT`), with the token kept in the keychain.
    pub hub: Hub,
    pub downloads: Downloads,
    pub library: Library,
    /// The OpenAI-compatible server (Settings → Server), off unless the user switched it on.
    pub server: ServerControl,
    /// The user's MCP servers (Settings → Tools), each started when first needed.
    pub tools: ToolServers,
    /// The servers' questions to the user mid-call, waiting for the window.
    pub questions: ToolQuestions,
    /// Turns with tools in flight: approvals asked of the window, Stop.
    pub agent: agent::Agent,
    /// The embedding model that ranks retrieved passages by meaning too, if one is chosen.
    pub embedding: EmbeddingModel,
}

impl App {
    /// Opens the history, starts the engine and configures the providers; no model is loaded
    /// yet (`models.load_at_start`).
    pub async fn open(paths: AppPaths) -> Result<App, OpenError> {
        let store = Store::open(&paths.database).await?;
        let settings = Settings::new(store.clone());
        // Chats' KV caches spill here, so a chat switched back to (or reopened after a restart)
        // is not prefilled again.
        let engine = Engine::spawn_with(HostProgram::from_env().with_kv_dir(paths.data_dir.join(KV_CACHE_DIR)));
        engine.set_cache_budgets(settings.cache_budgets().await?);
        let keys = Arc::new(KeyStore::new(paths.data_dir.join("keys.json")));
        // The hub (for remote models' tokenizers) honours HF_ENDPOINT and the standard cache.
        let providers = Providers::new(keys.clone(), Timeouts::default(), &HubOptions::default());
        providers.set_configs(settings.providers().await?);
        let backend = Switch::new(Arc::new(engine.clone()), Arc::new(providers.clone()));
        let mut chat = ChatService::new(Arc::new(backend), Arc::new(store.clone()));
        let embedding = EmbeddingModel::open(engine.clone(), settings.clone()).await?;
        chat.set_embedder(Arc::new(embedding.clone()));
        let token = keys.secret(Secret::HubToken).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the Hugging Face token could not be read");
            None
        });
        let hub = Hub::new(&HubConfig { token, ..HubConfig::default() })?;
        let cache = HubCache::new(HubCache::default_root());
        let downloads = Downloads::new(hub.clone(), cache.clone(), paths.data_dir.join("downloads.json"), RetryPolicy::default());
        let library = Library::new(cache, paths.models_dir.clone(), paths.data_dir.join("imports.json"));
        let models = Models::new(engine.clone(), store.clone());
        let server_models = ServerModels { library: library.clone(), models: models.clone() };
        let server = ServerControl::new(engine.clone(), Arc::new(server_models), keys.clone(), store.clone());
        let tools = ToolServers::open(settings.clone(), keys.clone()).await?;
        let questions = ToolQuestions::default();
        tools.hub().set_asker(questions.asker());
        Ok(App {
            paths,
            chat,
            engine,
            providers,
            keys,
            store,
            settings,
            models,
            hub,
            downloads,
            library,
            server,
            tools,
            questions,
            agent: agent::Agent::default(),
            embedding,
        })
    }

    /// The sampling settings a chat's next reply uses: the chat's own, else the loaded model's,
    /// else the global ones, else the defaults.
    pub async fn chat_sampling(&self, chat: hearth_core::ChatId) -> Result<SamplingParams, StoreError> {
        Ok(self.sampling(&SettingsScope::Chat { id: chat }).await?.params)
    }

    /// The settings in force at `scope`, a chat inheriting from the model loaded now.
    pub async fn sampling(&self, scope: &SettingsScope) -> Result<ResolvedSampling, StoreError> {
        self.settings.sampling(scope, self.models.loaded_path().as_deref()).await
    }

    /// What chats' KV caches take in RAM and on disk, and their budgets.
    pub async fn chat_cache_usage(&self) -> Result<ChatCacheUsage, StoreError> {
        let (bytes, chats) = hearth_engine::kv_memory::disk_usage(&self.paths.data_dir.join(KV_CACHE_DIR));
        let budgets = self.settings.cache_budgets().await?;
        // The engine reports as of its last request; budgets just lowered are in force before its next.
        let held = self.engine.held_memory().await;
        let ram_bytes = held.chat_caches.min(budgets.ram_bytes());
        let kept_model_bytes = held.kept_models.min(budgets.models_ram_bytes());
        let (model_bytes, context_bytes) = self.models.loaded().map_or((0, 0), |m| (m.size_bytes, m.kv_bytes.unwrap_or(0)));
        Ok(ChatCacheUsage { bytes, chats, ram_bytes, budgets, model_bytes, context_bytes, kept_model_bytes })
    }

    /// Validates, saves and puts in force the budgets for chats' caches: states past them leave
    /// RAM for disk, or are deleted, at once. Answers with the usage after that.
    pub async fn set_cache_budgets(&self, budgets: CacheBudgets) -> Result<ChatCacheUsage, SettingsError> {
        self.settings.set_cache_budgets(&budgets).await?;
        self.engine.set_cache_budgets(budgets);
        Ok(self.chat_cache_usage().await?)
    }

    /// Drops every chat's KV cache, in the engine's RAM and on disk: the next reply of each chat
    /// reads its prompt again.
    pub async fn clear_chat_caches(&self) -> Result<ChatCacheUsage, StoreError> {
        self.engine.forget_all();
        let dir = self.paths.data_dir.join(KV_CACHE_DIR);
        if let Err(e) = std::fs::remove_dir_all(&dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(dir = %dir.display(), error = %e, "could not delete the chats' caches");
        }
        // The engine drops its RAM copies before its next request; until then it reports them.
        Ok(ChatCacheUsage { ram_bytes: 0, ..self.chat_cache_usage().await? })
    }

    /// Starts the server if the user left it on (at launch; needs a tokio runtime).
    pub async fn start_server(&self) -> Result<(), StoreError> {
        self.server.apply(&self.settings.server().await?).await;
        Ok(())
    }

    /// The server's settings, where it listens (or why it does not), and the requests it answered.
    pub async fn server_status(&self) -> Result<ServerStatus, StoreError> {
        let settings = self.settings.server().await?;
        let (url, problem) = self.server.state();
        let key_set = self.keys.location(Secret::ServerKey).is_ok_and(|l| l.is_some());
        Ok(ServerStatus { settings, url, problem, key_set, requests: self.server.requests() })
    }

    /// Validates, saves and applies the server's settings: the network needs a key first.
    pub async fn set_server(&self, settings: ServerSettings) -> Result<ServerStatus, SettingsError> {
        let settings = settings.normalized()?;
        if settings.network && self.keys.location(Secret::ServerKey)?.is_none() {
            return Err(FieldError::new("network", "set an API key first: programs on other machines must send it").into());
        }
        self.settings.set_server(&settings).await?;
        self.server.apply(&settings).await;
        Ok(self.server_status().await?)
    }

    /// Saves (or with `None` removes) the server's API key; a running server takes it at once.
    pub async fn set_server_key(&self, key: Option<String>) -> Result<ServerStatus, SettingsError> {
        let settings = self.settings.server().await?;
        match key.as_deref().map(str::trim) {
            Some("") => return Err(FieldError::new("key", "the key is empty").into()),
            Some(key) => drop(self.keys.set(Secret::ServerKey, key)?),
            None if settings.network => {
                return Err(FieldError::new("key", "the server is open to the network: turn that off before removing its key").into());
            }
            None => self.keys.delete(Secret::ServerKey)?,
        }
        self.server.apply(&settings).await;
        Ok(self.server_status().await?)
    }

    /// Adds `config`, or replaces the provider with its id. A key given for one host is not sent
    /// to another: when the base URL moves to another scheme, host or port, the key is forgotten
    /// (and the settings ask for it again). Returns whether it was.
    pub async fn save_provider(&self, config: hearth_core::ProviderConfig) -> Result<bool, SettingsError> {
        config.validate()?;
        let mut configs = self.providers.configs();
        let moved = match configs.iter_mut().find(|c| c.id == config.id) {
            Some(existing) => !std::mem::replace(existing, config.clone()).same_destination(&config),
            None => {
                configs.push(config.clone());
                false
            }
        };
        if moved {
            // Before the new address is in force, so no request can carry the key there.
            self.keys.delete(Secret::Provider(&config.id))?;
        }
        self.set_providers(configs).await?;
        Ok(moved)
    }

    /// Saves the provider list and puts it in force.
    pub async fn set_providers(&self, configs: Vec<hearth_core::ProviderConfig>) -> Result<(), StoreError> {
        self.settings.set_providers(&configs).await?;
        self.providers.set_configs(configs);
        Ok(())
    }
}
