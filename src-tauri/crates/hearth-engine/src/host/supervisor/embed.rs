//! Texts embedded by the engine process, for retrieval by meaning.

use std::path::Path;

use tokio::sync::oneshot;

use super::{Engine, Pending, SubmitError};
use crate::EngineError;
use crate::host::protocol::ToHost;

impl Engine {
    /// The vectors of `texts` by the embedding model at `model`, in order, each of unit length.
    /// Read on the engine process's thread for embeddings, beside replies; a file that is no
    /// embedding model, or does not load, is refused in words.
    pub async fn embed(&self, model: &Path, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EngineError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let (reply, answer) = oneshot::channel();
        let id = self.shared.id();
        let request = ToHost::Embed { id, model: model.to_path_buf(), texts };
        self.shared.submit(id, Pending::Embed { reply, model: model.to_path_buf() }, request).map_err(|e| match e {
            SubmitError::Frame(e) => EngineError::Embed { path: model.display().to_string(), reason: e.to_string() },
            other => other.into(),
        })?;
        answer.await.map_err(|_| EngineError::Gone)?
    }
}
