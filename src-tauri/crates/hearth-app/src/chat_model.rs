//! The local model each chat talks to. A chat remembers it (its target, `ModelTarget::Local`):
//! the model it first answered with locally, or the one the user picked for it. Before the
//! chat answers, that model is loaded if another one is loaded, or none is (unloaded while
//! idle, after the time the user set).

use std::path::Path;
use std::time::Duration;

use hearth_core::{ChatId, HistoryStore, ModelInfo, ModelTarget, model_name};
use hearth_store::StoreError;

use crate::model_memory::ACTIVE_MODEL_KEY;
use crate::{App, LoadError};

/// How often the idle model is looked at: an unload comes at most this late.
pub const IDLE_CHECK: Duration = Duration::from_secs(20);

/// How far the load of a chat's model has got, as a turn that needed it reports it: the first
/// at 0 as the load begins, so the window shows it at once.
#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
pub struct ModelLoading {
    /// The file being loaded.
    pub path: String,
    /// What it is called (its file's name without the extension).
    pub name: String,
    /// 0..=1.
    pub fraction: f32,
}

#[derive(Debug, thiserror::Error)]
pub enum ChatModelError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("this chat talks to {name}, whose file is gone ({path}); pick another model for it with the model button")]
    Missing { name: String, path: String },
    #[error("there is no model file at {path}")]
    NoFile { path: String },
    #[error(transparent)]
    Load(#[from] LoadError),
}

impl App {
    /// Loads the model `chat` talks to when another one, or none, is loaded, telling `progress`
    /// which and how far it got; `None` when nothing needed loading (a remote chat, its model
    /// loaded). A chat that names no model uses the loaded one, or when none is, the one loaded last.
    pub async fn ready_chat_model(
        &self,
        chat: ChatId,
        progress: impl FnMut(ModelLoading) + Send + 'static,
    ) -> Result<Option<ModelInfo>, ChatModelError> {
        self.models.settled().await;
        let target = self.store.chat_target(chat).await?;
        self.ready(chat, &target, progress).await
    }

    async fn ready(
        &self,
        chat: ChatId,
        target: &ModelTarget,
        mut progress: impl FnMut(ModelLoading) + Send + 'static,
    ) -> Result<Option<ModelInfo>, ChatModelError> {
        let ModelTarget::Local { model } = target else { return Ok(None) };
        let loaded = self.models.loaded_path();
        let wanted = match model {
            Some(path) if !Path::new(path).is_file() => {
                return Err(ChatModelError::Missing { name: model_name(path), path: path.clone() });
            }
            Some(path) => path.clone(),
            None if loaded.is_some() => return Ok(None),
            None => match self.store.setting(ACTIVE_MODEL_KEY).await? {
                Some(path) if Path::new(&path).is_file() => path,
                _ => return Ok(None), // The reply then says no model is loaded.
            },
        };
        if loaded.as_deref() == Some(wanted.as_str()) {
            return Ok(None);
        }
        tracing::info!(chat, model = %wanted, "loading the chat's model");
        let (path, name) = (wanted.clone(), model_name(&wanted));
        let mut report = move |fraction| progress(ModelLoading { path: path.clone(), name: name.clone(), fraction });
        report(0.0);
        Ok(Some(self.models.load(&wanted, report).await?))
    }

    /// Readies `chat`'s model for a reply (loaded if needed, telling `progress` how far the load
    /// got) and, if the chat names none yet, remembers the loaded one as its model from now on.
    /// The window decides nothing about it: a turn it sends goes at once, and the load's progress
    /// comes back on the turn's events.
    pub async fn prepare_chat_model(
        &self,
        chat: ChatId,
        progress: impl FnMut(ModelLoading) + Send + 'static,
    ) -> Result<(), ChatModelError> {
        self.models.settled().await;
        let target = self.store.chat_target(chat).await?;
        self.ready(chat, &target, progress).await?;
        if let (ModelTarget::Local { model: None }, Some(path)) = (target, self.models.loaded_path()) {
            self.store.set_chat_target(chat, &ModelTarget::Local { model: Some(path) }).await?;
        }
        Ok(())
    }

    /// Makes `path` the model `chat` talks to and loads it (telling `progress`).
    pub async fn use_local_model(
        &self,
        chat: ChatId,
        path: &str,
        mut progress: impl FnMut(f32) + Send + 'static,
    ) -> Result<Option<ModelInfo>, ChatModelError> {
        if !Path::new(path).is_file() {
            return Err(ChatModelError::NoFile { path: path.to_owned() });
        }
        self.store.set_chat_target(chat, &ModelTarget::Local { model: Some(path.to_owned()) }).await?;
        self.ready_chat_model(chat, move |loading| progress(loading.fraction)).await
    }

    /// Unloads the loaded model if it has been idle (no reply, load or read-ahead) for at least
    /// `after`; true if it did. Its chats' caches go to disk with it.
    pub async fn unload_if_idle(&self, after: Duration) -> bool {
        let Some(idle) = self.engine.idle_for().filter(|idle| *idle >= after) else { return false };
        if self.models.loaded().is_none() {
            return false;
        }
        match self.models.unload().await {
            Ok(()) => {
                tracing::info!(idle_s = idle.as_secs(), "the model was idle and was unloaded");
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "the idle model could not be unloaded");
                false
            }
        }
    }

    /// Unloads the model if it has been idle for the time the user set (never by default). The
    /// window's shell calls it every [`IDLE_CHECK`].
    pub async fn unload_idle_model(&self) -> bool {
        match self.settings.cache_budgets().await.map(|b| b.unload_idle_after()) {
            Ok(Some(after)) => self.unload_if_idle(after).await,
            Ok(None) => false,
            Err(e) => {
                tracing::warn!(error = %e, "the idle-unload setting could not be read");
                false
            }
        }
    }
}
