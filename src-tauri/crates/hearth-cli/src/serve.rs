//! `hearth-cli serve`: the model as a local OpenAI-compatible server (hearth-server), headless.

use std::path::Path;

use hearth_engine::Engine;
use hearth_server::{ServerConfig, ServerState};

use crate::args::ServeArgs;

pub async fn run(args: ServeArgs) -> Result<(), String> {
    let config = ServerConfig { host: args.host, port: args.port, api_key: args.api_key, sampling: args.sampling };
    // Refuse a network address without a key before spending time on the model.
    let listener = hearth_server::bind(&config).await.map_err(|e| e.to_string())?;
    let engine = Engine::spawn();
    let info = engine.load(Path::new(&args.model), args.load).await.map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    // Scripts (and the tests) read the address from this line.
    eprintln!("{} loaded; OpenAI-compatible API at http://{addr}/v1 (model id \"{}\")", info.name, info.name);
    let served = hearth_server::serve(listener, ServerState::new(engine.clone(), &config, hearth_server::RequestLog::default())).await;
    engine.shutdown();
    served.map_err(|e| e.to_string())
}
