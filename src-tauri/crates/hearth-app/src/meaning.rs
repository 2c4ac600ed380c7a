//! The embedding model the user chose for retrieval by meaning (Settings → Attachments): saved,
//! checked when chosen (a GGUF that pools its tokens, which the engine embeds a word with), and
//! lent to `ChatService` and to attaching as `hearth_core::Embedder`, the engine process reading
//! the texts.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use hearth_core::{EmbedError, Embedded, Embedder};
use hearth_engine::{Engine, EngineError};
use hearth_store::StoreError;

use crate::Settings;

/// The chosen model: its file and its identity by content (vectors are kept under it).
#[derive(Debug, Clone, PartialEq)]
struct Chosen {
    path: PathBuf,
    key: String,
}

/// The embedding model in use, shared by the chat flow and attaching.
#[derive(Clone)]
pub struct EmbeddingModel {
    engine: Engine,
    settings: Settings,
    chosen: Arc<Mutex<Option<Chosen>>>,
}

#[derive(Debug, thiserror::Error)]
pub enum EmbeddingModelError {
    /// The file cannot embed (not GGUF, not an embedding model, or llama.cpp refuses it).
    #[error(transparent)]
    Refused(#[from] EngineError),
    #[error("{path} cannot be read: {source}")]
    Unreadable { path: String, source: std::io::Error },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl EmbeddingModel {
    /// The model saved in `settings`, in use again; one that can no longer be read (moved,
    /// deleted) is left unset, said in the log.
    pub async fn open(engine: Engine, settings: Settings) -> Result<EmbeddingModel, StoreError> {
        let model = EmbeddingModel { engine, settings, chosen: Arc::default() };
        if let Some(path) = model.settings.embedding_model().await? {
            match hearth_engine::kv_memory::model_key(Path::new(&path)) {
                Ok(key) => *model.chosen.lock().expect("embedding model poisoned") = Some(Chosen { path: path.into(), key }),
                Err(e) => tracing::warn!(%path, error = %e, "the embedding model chosen cannot be read; retrieval ranks by words"),
            }
        }
        Ok(model)
    }

    /// The chosen model's file, if any.
    pub fn path(&self) -> Option<String> {
        self.chosen.lock().expect("embedding model poisoned").as_ref().map(|c| c.path.display().to_string())
    }

    /// Chooses the model at `path` (`None`: none, words alone rank passages), once the engine
    /// has embedded a word with it; saved. A file that cannot embed is refused in words and
    /// nothing changes.
    pub async fn choose(&self, path: Option<&str>) -> Result<Option<String>, EmbeddingModelError> {
        let chosen = match path {
            None => None,
            Some(path) => {
                let key = hearth_engine::kv_memory::model_key(Path::new(path))
                    .map_err(|source| EmbeddingModelError::Unreadable { path: path.to_owned(), source })?;
                self.engine.embed(Path::new(path), vec!["Hearth".into()]).await?;
                Some(Chosen { path: path.into(), key })
            }
        };
        self.settings.set_embedding_model(path).await?;
        *self.chosen.lock().expect("embedding model poisoned") = chosen;
        Ok(self.path())
    }
}

impl Embedder for EmbeddingModel {
    fn model(&self) -> Option<String> {
        self.chosen.lock().expect("embedding model poisoned").as_ref().map(|c| c.key.clone())
    }

    fn embed(&self, texts: Vec<String>) -> Pin<Box<dyn Future<Output = Result<Embedded, EmbedError>> + Send + '_>> {
        Box::pin(async move {
            let Some(Chosen { path, key }) = self.chosen.lock().expect("embedding model poisoned").clone() else {
                return Err(EmbedError("no embedding model is chosen".into()));
            };
            let vectors = self.engine.embed(&path, texts).await.map_err(|e| EmbedError(e.to_string()))?;
            Ok(Embedded { model: key, vectors })
        })
    }
}
