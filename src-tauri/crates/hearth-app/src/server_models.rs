//! The models a request to the app's server may name: the library the model manager shows,
//! by file name without `.gguf` (the id the engine gives a loaded model). One not loaded is
//! loaded as the user would load it (its saved settings, safe mode, the previous model loaded
//! again if it fails).

use std::future::Future;
use std::pin::Pin;

use hearth_hub::Library;
use hearth_server::{LoadFailure, ModelLibrary};

use crate::Models;

pub struct ServerModels {
    pub library: Library,
    pub models: Models,
}

/// `(id, path)` of each model of the library that can be loaded, the first of each id.
fn loadable(library: &Library) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    for model in library.list(None).into_iter().filter(|m| m.error.is_none()) {
        let id = hearth_core::model_name(&model.path);
        if !found.iter().any(|(known, _)| *known == id) {
            found.push((id, model.path));
        }
    }
    found
}

impl ModelLibrary for ServerModels {
    fn names(&self) -> Vec<String> {
        loadable(&self.library).into_iter().map(|(id, _)| id).collect()
    }

    fn load<'a>(&'a self, name: &'a str) -> Pin<Box<dyn Future<Output = Result<(), LoadFailure>> + Send + 'a>> {
        Box::pin(async move {
            let path = loadable(&self.library)
                .into_iter()
                .find_map(|(id, path)| (id == name).then_some(path))
                .ok_or_else(|| LoadFailure("it is no longer in the library".into()))?;
            self.models.load(&path, |_| {}).await.map(drop).map_err(|e| LoadFailure(e.to_string()))
        })
    }
}
