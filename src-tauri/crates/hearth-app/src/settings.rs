//! The settings the user saves, in the history database: sampling per scope (chat > model >
//! global > defaults), presets, provider configurations, each model's load settings, and the
//! limits on attached files.
//! Values saved by another version that no longer parse or validate count as unset: defaults
//! are safer than a guess.

use serde::Serialize;
use serde::de::DeserializeOwned;
use ts_rs::TS;

use hearth_core::{
    AttachmentLimits, CacheBudgets, FieldError, LoadParams, Preset, ProviderConfig, ProviderKind, SamplingParams, SettingsScope,
};
use hearth_store::{Store, StoreError};

use crate::ServerSettings;

/// Settings key of the user's presets (JSON list).
const PRESETS_KEY: &str = "presets";
/// Settings key of the configured providers (JSON list; keys are in the keychain, not here).
const PROVIDERS_KEY: &str = "providers";
/// Settings key of the budgets for chats' KV caches.
const CACHE_BUDGETS_KEY: &str = "cache-budgets";
/// Settings key of the limits on attached files.
const ATTACHMENT_LIMITS_KEY: &str = "attachment-limits";
/// Settings key of the OpenAI-compatible server's settings.
const SERVER_KEY: &str = "server";
/// Settings key of the embedding model chosen for retrieval by meaning (a path; none: unset).
const EMBEDDING_MODEL_KEY: &str = "embedding-model";
/// Settings key of the MCP servers (JSON list; their environment and headers are in the keychain).
const MCP_SERVERS_KEY: &str = "mcp-servers";

/// Settings key of one model file's load settings.
fn load_key(model_path: &str) -> String {
    format!("load:model:{model_path}")
}

/// The providers on first start: OpenAI and Anthropic, without keys.
pub fn default_providers() -> Vec<ProviderConfig> {
    vec![
        ProviderConfig::new("openai", "OpenAI", ProviderKind::OpenAi),
        ProviderConfig::new("anthropic", "Anthropic", ProviderKind::Anthropic),
    ]
}

/// The sampling settings in force at a scope and where they come from.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ResolvedSampling {
    pub params: SamplingParams,
    /// The scope whose own settings these are; `None`: the defaults.
    pub source: Option<SettingsScope>,
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Invalid(#[from] FieldError),
    #[error(transparent)]
    Key(#[from] hearth_providers::KeyError),
}

/// Typed access to the saved settings.
#[derive(Clone)]
pub struct Settings {
    store: Store,
}

impl Settings {
    pub fn new(store: Store) -> Self {
        Settings { store }
    }

    async fn read<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, StoreError> {
        Ok(self.store.setting(key).await?.and_then(|json| serde_json::from_str(&json).ok()))
    }

    async fn write<T: Serialize>(&self, key: &str, value: &T) -> Result<(), StoreError> {
        let json = serde_json::to_string(value).expect("settings serialize");
        self.store.set_setting(key, &json).await
    }

    /// The settings saved at `scope` itself, if any.
    pub async fn own_sampling(&self, scope: &SettingsScope) -> Result<Option<SamplingParams>, StoreError> {
        Ok(self.read::<SamplingParams>(&scope.key()).await?.filter(|p| p.validate().is_ok()))
    }

    /// The settings in force at `scope`: its own, else the nearest broader scope's, else the
    /// defaults. A chat inherits from `model`, the model it runs on.
    pub async fn sampling(&self, scope: &SettingsScope, model: Option<&str>) -> Result<ResolvedSampling, StoreError> {
        for candidate in scope.lookup_order(model) {
            if let Some(params) = self.own_sampling(&candidate).await? {
                return Ok(ResolvedSampling { params, source: Some(candidate) });
            }
        }
        Ok(ResolvedSampling { params: SamplingParams::default(), source: None })
    }

    /// Validates and saves `params` at `scope`.
    pub async fn set_sampling(&self, scope: &SettingsScope, params: &SamplingParams) -> Result<(), SettingsError> {
        params.validate().map_err(FieldError::from)?;
        Ok(self.write(&scope.key(), params).await?)
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
        Ok(self.read(PRESETS_KEY).await?.unwrap_or_default())
    }

    /// Saves (or replaces) a user preset. Built-in names are taken.
    pub async fn save_preset(&self, name: &str, params: SamplingParams) -> Result<(), SettingsError> {
        params.validate().map_err(FieldError::from)?;
        let name = name.trim();
        if name.is_empty() || SamplingParams::presets().iter().any(|p| p.name.eq_ignore_ascii_case(name)) {
            return Err(FieldError::new("name", format!("choose another name: {name:?} is empty or a built-in preset")).into());
        }
        let mut presets = self.user_presets().await?;
        presets.retain(|p| p.name != name);
        presets.push(Preset { name: name.to_owned(), params, built_in: false });
        Ok(self.write(PRESETS_KEY, &presets).await?)
    }

    pub async fn delete_preset(&self, name: &str) -> Result<(), StoreError> {
        let mut presets = self.user_presets().await?;
        presets.retain(|p| p.name != name);
        self.write(PRESETS_KEY, &presets).await
    }

    /// The saved providers; OpenAI and Anthropic (without keys) on first start, so a user only
    /// has to paste a key.
    pub async fn providers(&self) -> Result<Vec<ProviderConfig>, StoreError> {
        Ok(self.read(PROVIDERS_KEY).await?.unwrap_or_else(default_providers))
    }

    pub async fn set_providers(&self, configs: &[ProviderConfig]) -> Result<(), StoreError> {
        self.write(PROVIDERS_KEY, &configs).await
    }

    /// The MCP servers the user added, without their secret values (see `ToolServers`).
    pub async fn mcp_servers(&self) -> Result<Vec<hearth_mcp::McpServerConfig>, StoreError> {
        Ok(self.read(MCP_SERVERS_KEY).await?.unwrap_or_default())
    }

    pub async fn set_mcp_servers(&self, configs: &[hearth_mcp::McpServerConfig]) -> Result<(), StoreError> {
        self.write(MCP_SERVERS_KEY, &configs).await
    }

    /// The budgets for chats' KV caches; the defaults until the user sets them.
    pub async fn cache_budgets(&self) -> Result<CacheBudgets, StoreError> {
        Ok(self.read::<CacheBudgets>(CACHE_BUDGETS_KEY).await?.filter(|b| b.validate().is_ok()).unwrap_or_default())
    }

    pub async fn set_cache_budgets(&self, budgets: &CacheBudgets) -> Result<(), SettingsError> {
        budgets.validate()?;
        Ok(self.write(CACHE_BUDGETS_KEY, budgets).await?)
    }

    /// The limits on attached files; the defaults until the user sets them.
    pub async fn attachment_limits(&self) -> Result<AttachmentLimits, StoreError> {
        Ok(self.read::<AttachmentLimits>(ATTACHMENT_LIMITS_KEY).await?.filter(|l| l.validate().is_ok()).unwrap_or_default())
    }

    pub async fn set_attachment_limits(&self, limits: &AttachmentLimits) -> Result<(), SettingsError> {
        limits.validate()?;
        Ok(self.write(ATTACHMENT_LIMITS_KEY, limits).await?)
    }

    /// The embedding model chosen for retrieval by meaning, if any.
    pub async fn embedding_model(&self) -> Result<Option<String>, StoreError> {
        Ok(self.read::<Option<String>>(EMBEDDING_MODEL_KEY).await?.flatten())
    }

    pub async fn set_embedding_model(&self, path: Option<&str>) -> Result<(), StoreError> {
        self.write(EMBEDDING_MODEL_KEY, &path).await
    }

    /// The server's settings; off on loopback until the user changes them.
    pub async fn server(&self) -> Result<ServerSettings, StoreError> {
        Ok(self.read::<ServerSettings>(SERVER_KEY).await?.filter(|s| s.validate().is_ok()).unwrap_or_default())
    }

    pub async fn set_server(&self, settings: &ServerSettings) -> Result<(), SettingsError> {
        settings.validate()?;
        Ok(self.write(SERVER_KEY, settings).await?)
    }

    /// The load settings saved for `model_path`; defaults when none are.
    pub async fn load_params(&self, model_path: &str) -> Result<LoadParams, StoreError> {
        Ok(self.read::<LoadParams>(&load_key(model_path)).await?.filter(|p| p.validate().is_ok()).unwrap_or_default())
    }

    /// Validates and saves `model_path`'s load settings; they apply at its next load.
    pub async fn set_load_params(&self, model_path: &str, params: &LoadParams) -> Result<(), SettingsError> {
        params.validate()?;
        Ok(self.write(&load_key(model_path), params).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn settings() -> (tempfile::TempDir, Settings) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("hearth.db")).await.unwrap();
        (dir, Settings::new(store))
    }

    fn temp(t: f32) -> SamplingParams {
        SamplingParams { temperature: t, ..SamplingParams::default() }
    }

    /// Which scope's settings a chat gets, for each combination of saved scopes.
    #[tokio::test]
    async fn a_chat_takes_its_own_then_its_models_then_the_global_settings() {
        let (_dir, settings) = settings().await;
        let chat = SettingsScope::Chat { id: 7 };
        let model = SettingsScope::Model { path: "/m.gguf".into() };
        let resolved = |scope: SettingsScope, model: Option<&'static str>| {
            let settings = settings.clone();
            async move { settings.sampling(&scope, model).await.unwrap() }
        };
        assert_eq!(resolved(chat.clone(), Some("/m.gguf")).await, ResolvedSampling { params: SamplingParams::default(), source: None });
        settings.set_sampling(&SettingsScope::Global, &temp(0.3)).await.unwrap();
        assert_eq!(resolved(chat.clone(), Some("/m.gguf")).await.source, Some(SettingsScope::Global));
        settings.set_sampling(&model, &temp(0.4)).await.unwrap();
        let got = resolved(chat.clone(), Some("/m.gguf")).await;
        assert_eq!((got.params.temperature, got.source), (0.4, Some(model.clone())));
        // On another model the chat skips this model's settings.
        assert_eq!(resolved(chat.clone(), Some("/other.gguf")).await.source, Some(SettingsScope::Global));
        settings.set_sampling(&chat, &temp(0.5)).await.unwrap();
        assert_eq!(resolved(chat.clone(), Some("/m.gguf")).await.params.temperature, 0.5);
        settings.clear_sampling(&chat).await.unwrap();
        assert_eq!(resolved(chat, Some("/m.gguf")).await.source, Some(model));
    }

    #[tokio::test]
    async fn refusals_name_the_field() {
        let (_dir, settings) = settings().await;
        let err = settings.set_sampling(&SettingsScope::Global, &SamplingParams { top_p: 2.0, ..SamplingParams::default() }).await;
        assert!(matches!(err, Err(SettingsError::Invalid(FieldError { ref field, .. })) if field == "topP"), "{err:?}");
        let err = settings.save_preset("balanced", SamplingParams::default()).await;
        assert!(matches!(err, Err(SettingsError::Invalid(FieldError { ref field, .. })) if field == "name"), "{err:?}");
        let err = settings.set_load_params("/m.gguf", &LoadParams { n_ctx: Some(1), ..LoadParams::default() }).await;
        assert!(matches!(err, Err(SettingsError::Invalid(FieldError { ref field, .. })) if field == "nCtx"), "{err:?}");
        let err = settings.set_cache_budgets(&CacheBudgets { disk_mb: u32::MAX, ..CacheBudgets::default() }).await;
        assert!(matches!(err, Err(SettingsError::Invalid(FieldError { ref field, .. })) if field == "diskMb"), "{err:?}");
        assert_eq!(settings.cache_budgets().await.unwrap(), CacheBudgets::default(), "nothing refused is saved");
        let small = CacheBudgets { ram_mb: 0, disk_mb: 10, unload_idle_minutes: 30, models_ram_mb: 512 };
        settings.set_cache_budgets(&small).await.unwrap();
        assert_eq!(settings.cache_budgets().await.unwrap(), small);
        let err = settings.set_attachment_limits(&AttachmentLimits { max_file_mb: 0, ..AttachmentLimits::default() }).await;
        assert!(matches!(err, Err(SettingsError::Invalid(FieldError { ref field, .. })) if field == "maxFileMb"), "{err:?}");
        assert_eq!(settings.attachment_limits().await.unwrap(), AttachmentLimits::default(), "nothing refused is saved");
        let larger = AttachmentLimits { max_file_mb: 512, max_image_megapixels: 12 };
        settings.set_attachment_limits(&larger).await.unwrap();
        assert_eq!(settings.attachment_limits().await.unwrap(), larger);
        settings.save_preset("Mine", temp(0.1)).await.unwrap();
        assert_eq!(settings.presets().await.unwrap().last().map(|p| (p.name.as_str(), p.built_in)), Some(("Mine", false)));
    }
}
