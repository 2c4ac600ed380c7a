//! `hearth-cli serve`: the model as a local OpenAI-compatible server (hearth-server), headless.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use hearth_core::LoadParams;
use hearth_engine::Engine;
use hearth_server::{LoadFailure, ModelLibrary, ServerConfig, ServerState};

use crate::args::ServeArgs;

pub async fn run(args: ServeArgs) -> Result<(), String> {
    let config = ServerConfig {
        host: args.host,
        port: args.port,
        api_key: args.api_key,
        sampling: args.sampling,
        allowed_origins: args.allowed_origins,
    };
    // Refuse a network address without a key before spending time on the model.
    let listener = hearth_server::bind(&config).await.map_err(|e| e.to_string())?;
    let engine = Engine::spawn();
    let info = engine.load(Path::new(&args.model), args.load.clone()).await.map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    // Scripts (and the tests) read the address from this line.
    eprintln!("{} loaded; OpenAI-compatible API at http://{addr}/v1 (model id \"{}\")", info.name, info.name);
    let mut state = ServerState::new(engine.clone(), &config, hearth_server::RequestLog::default()).with_limits(args.limits);
    if let Some(dir) = args.models_dir {
        state = state.with_library(Arc::new(Folder { dir, engine: engine.clone(), load: args.load }));
    }
    let served = hearth_server::serve(listener, state).await;
    engine.shutdown();
    served.map_err(|e| e.to_string())
}

/// `--models-dir`: the GGUF files of one folder by name, loaded with the command's load flags.
struct Folder {
    dir: PathBuf,
    engine: Engine,
    load: LoadParams,
}

impl ModelLibrary for Folder {
    fn names(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let mut names: Vec<String> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "gguf"))
            .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .collect();
        names.sort();
        names
    }

    fn load<'a>(&'a self, name: &'a str) -> Pin<Box<dyn Future<Output = Result<(), LoadFailure>> + Send + 'a>> {
        // `name` is one of `names()`: the server checks before it asks.
        let path = self.dir.join(format!("{name}.gguf"));
        Box::pin(async move { self.engine.load(&path, self.load.clone()).await.map(drop).map_err(|e| LoadFailure(e.to_string())) })
    }
}
