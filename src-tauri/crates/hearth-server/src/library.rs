//! Models a request may name besides the loaded one: the user's library, loaded when a request
//! asks for one (just in time). The engine holds one model at a time, so a load waits until the
//! replies of the model before it have ended, and requests that come while it loads wait for it
//! (then are answered by it, or load theirs in turn).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::{OwnedRwLockReadGuard, RwLock};

use crate::ServerState;
use crate::error::ApiError;

/// The models that can be loaded on request, and how (the app loads with the model's saved
/// settings; `hearth-cli serve` with its flags).
pub trait ModelLibrary: Send + Sync {
    /// The ids a request may name, as `/v1/models` lists them.
    fn names(&self) -> Vec<String>;
    /// Loads `name` in place of the loaded model.
    fn load<'a>(&'a self, name: &'a str) -> Pin<Box<dyn Future<Output = Result<(), LoadFailure>> + Send + 'a>>;
}

/// Why a model of the library did not load, in words for the client.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct LoadFailure(pub String);

/// The library and the lock that keeps a load from replacing the model under a reply: each
/// reply holds it shared for its whole length, a load holds it alone.
#[derive(Clone, Default)]
pub(crate) struct Models {
    pub library: Option<Arc<dyn ModelLibrary>>,
    switching: Arc<RwLock<()>>,
}

/// The model a reply is written with; no other is loaded while this is held.
pub(crate) struct ModelLease {
    pub name: String,
    _shared: OwnedRwLockReadGuard<()>,
}

impl ServerState {
    /// The ids a request may name: the loaded model first, then the rest of the library.
    pub(crate) fn model_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.engine.loaded().map(|m| m.name).into_iter().collect();
        for name in self.models.library.iter().flat_map(|l| l.names()) {
            if !ids.contains(&name) {
                ids.push(name);
            }
        }
        ids
    }

    /// `name`, loaded (from the library if need be) and held for one reply.
    pub(crate) async fn lease_model(&self, name: &str) -> Result<ModelLease, ApiError> {
        let shared = self.models.switching.clone().read_owned().await;
        if self.engine.loaded().is_some_and(|m| m.name == name) {
            return Ok(ModelLease { name: name.to_owned(), _shared: shared });
        }
        drop(shared);
        let not_found = || ApiError::model_not_found(name, self.engine.loaded().as_ref().map(|m| m.name.as_str()));
        let library = self.models.library.as_ref().filter(|l| l.names().iter().any(|n| n == name)).ok_or_else(not_found)?;
        let alone = self.models.switching.clone().write_owned().await;
        // Another request may have loaded it while this one waited.
        if self.engine.loaded().is_none_or(|m| m.name != name) {
            tracing::info!(model = %name, "loading a model a request asked for");
            library.load(name).await.map_err(|e| ApiError::model_load_failed(name, &e.0))?;
        }
        Ok(ModelLease { name: name.to_owned(), _shared: alone.downgrade() })
    }
}
