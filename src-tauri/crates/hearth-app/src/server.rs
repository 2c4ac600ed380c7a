//! Settings → Server: Hearth's OpenAI-compatible server (hearth-server) inside the app, on the
//! window's own engine. Off by default; on loopback unless the user opts into the network, which
//! needs an API key (kept in the keychain, never shown again).

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use ts_rs::TS;

use hearth_core::{ChatId, FieldError, FieldRange, HistoryStore, MessageStatus, Role, SamplingParams};
use hearth_engine::Engine;
use hearth_providers::{KeyStore, Secret};
use hearth_server::{Exchange, ModelLibrary, RequestLog, RequestRecord, ServeError, ServerConfig, ServerState};
use hearth_store::{Store, StoreError};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerSettings {
    pub enabled: bool,
    pub port: u16,
    /// Listen on every network interface (an API key is then required), not only on this machine.
    pub network: bool,
    /// Save each request answered in full as a chat, to read what a tool asked.
    pub save_requests: bool,
    /// Web origins (`https://example.org`, or `*`) whose pages may call the server from a
    /// browser; empty: none may (pages served from this machine always can).
    pub allowed_origins: Vec<String>,
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            enabled: false,
            port: hearth_server::DEFAULT_PORT,
            network: false,
            save_requests: false,
            allowed_origins: Vec::new(),
        }
    }
}

const SERVER_RANGES: &[FieldRange] = &[FieldRange { key: "port", min: 1.0, max: 65535.0, text: "between 1 and 65535", integer: true }];

impl ServerSettings {
    pub fn ranges() -> &'static [FieldRange] {
        SERVER_RANGES
    }

    /// Validated, with the origins as browsers send them (each once).
    pub fn normalized(mut self) -> Result<Self, FieldError> {
        self.validate()?;
        let mut origins: Vec<String> = Vec::new();
        for origin in &self.allowed_origins {
            let origin = hearth_server::normalize_origin(origin).expect("validated");
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
        self.allowed_origins = origins;
        Ok(self)
    }

    pub fn validate(&self) -> Result<(), FieldError> {
        let port = &SERVER_RANGES[0];
        if !(port.min..=port.max).contains(&f64::from(self.port)) {
            return Err(FieldError::new(port.key, format!("the port must be {}", port.text)));
        }
        for origin in &self.allowed_origins {
            hearth_server::normalize_origin(origin).map_err(|why| FieldError::new("allowedOrigins", why))?;
        }
        Ok(())
    }
}

/// What the window shows of the server.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    pub settings: ServerSettings,
    /// Where programs on this machine reach it while it runs.
    pub url: Option<String>,
    /// Why it is not running although it is switched on.
    pub problem: Option<String>,
    /// Whether an API key is saved (the key itself never leaves the keychain).
    pub key_set: bool,
    /// The requests answered lately, newest first.
    pub requests: Vec<RequestRecord>,
}

/// Starts and stops the server as the settings say.
pub struct ServerControl {
    engine: Engine,
    /// What requests may name besides the loaded model (loaded when asked for).
    library: Arc<dyn ModelLibrary>,
    keys: Arc<KeyStore>,
    store: Store,
    log: RequestLog,
    running: Mutex<Running>,
}

#[derive(Default)]
struct Running {
    url: Option<String>,
    problem: Option<String>,
    stop: Option<oneshot::Sender<()>>,
}

impl ServerControl {
    pub fn new(engine: Engine, library: Arc<dyn ModelLibrary>, keys: Arc<KeyStore>, store: Store) -> Self {
        ServerControl { engine, library, keys, store, log: RequestLog::default(), running: Mutex::default() }
    }

    /// Stops the server if it runs, then starts it as `settings` say (with the key saved now).
    pub async fn apply(&self, settings: &ServerSettings) {
        self.stop();
        if !settings.enabled {
            return;
        }
        let outcome = self.start(settings).await;
        let mut running = self.running.lock().expect("server state poisoned");
        match outcome {
            Ok((url, stop)) => *running = Running { url: Some(url), problem: None, stop: Some(stop) },
            Err(problem) => {
                tracing::warn!(%problem, "the server did not start");
                *running = Running { problem: Some(problem), ..Running::default() };
            }
        }
    }

    async fn start(&self, settings: &ServerSettings) -> Result<(String, oneshot::Sender<()>), String> {
        let api_key = self.keys.secret(Secret::ServerKey).map_err(|e| format!("its API key could not be read: {e}"))?;
        let host = if settings.network { IpAddr::from([0, 0, 0, 0]) } else { IpAddr::from([127, 0, 0, 1]) };
        // The app's server starts from the defaults: a request sets what it wants.
        // Pages in a browser may use it only from the origins the user allowed.
        let allowed_origins = settings.allowed_origins.iter().filter_map(|o| hearth_server::normalize_origin(o).ok()).collect();
        let config = ServerConfig { host, port: settings.port, api_key, sampling: SamplingParams::default(), allowed_origins };
        let listener = bind_when_free(&config).await.map_err(|e| in_words(e, settings.port))?;
        let (stop, stopped) = oneshot::channel::<()>();
        let mut state = ServerState::new(self.engine.clone(), &config, self.log.clone()).with_library(self.library.clone());
        if settings.save_requests {
            let store = self.store.clone();
            state = state.with_exchanges(Arc::new(move |exchange| {
                let store = store.clone();
                tokio::spawn(async move {
                    if let Err(e) = save_exchange(&store, exchange).await {
                        tracing::warn!(error = %e, "a request to the server could not be saved as a chat");
                    }
                });
            }));
        }
        tokio::spawn(async move {
            if let Err(e) = hearth_server::serve_until(listener, state, async move { drop(stopped.await) }).await {
                tracing::warn!(error = %e, "the server stopped");
            }
        });
        let url = format!("http://127.0.0.1:{}/v1", settings.port);
        tracing::info!(%url, network = settings.network, "the server is listening");
        Ok((url, stop))
    }

    /// Closes the listener; replies under way finish.
    pub fn stop(&self) {
        let mut running = self.running.lock().expect("server state poisoned");
        if let Some(stop) = running.stop.take() {
            let _ = stop.send(());
        }
        *running = Running::default();
    }

    /// Where it listens, and why not if it should.
    pub fn state(&self) -> (Option<String>, Option<String>) {
        let running = self.running.lock().expect("server state poisoned");
        (running.url.clone(), running.problem.clone())
    }

    pub fn requests(&self) -> Vec<RequestRecord> {
        self.log.recent()
    }
}

/// How long a port that is in use gets to come free: a server just stopped lets go of its
/// listener a moment after it is told to.
const PORT_FREED_WITHIN: Duration = Duration::from_millis(1500);

async fn bind_when_free(config: &ServerConfig) -> Result<TcpListener, ServeError> {
    let deadline = Instant::now() + PORT_FREED_WITHIN;
    loop {
        match hearth_server::bind(config).await {
            Err(ServeError::Bind { source, .. }) if source.kind() == std::io::ErrorKind::AddrInUse && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            other => return other,
        }
    }
}

/// Saves a request the server answered as a chat, named after its client: its system prompt,
/// its messages in order (or the plain prompt) and the reply with its stats.
pub async fn save_exchange(store: &Store, exchange: Exchange) -> Result<ChatId, StoreError> {
    let chat = store.create_chat().await?.id;
    store.rename_chat(chat, &format!("API · {}", exchange.client)).await?;
    let system: Vec<&str> = exchange.messages.iter().filter(|m| m.role == Role::System).map(|m| m.content.as_str()).collect();
    if !system.is_empty() {
        store.set_system_prompt(chat, &system.join("\n\n")).await?;
    }
    let turns: Vec<(Role, &str)> = match &exchange.prompt {
        Some(prompt) => vec![(Role::User, prompt.as_str())],
        None => exchange.messages.iter().filter(|m| m.role != Role::System).map(|m| (m.role, m.content.as_str())).collect(),
    };
    let mut parent = None;
    for (role, content) in turns {
        let model = (role == Role::Assistant).then_some(exchange.model.as_str());
        parent = Some(store.append_message(chat, parent, role, content, MessageStatus::Complete, model).await?.id);
    }
    let reply =
        store.append_message(chat, parent, Role::Assistant, &exchange.reply, MessageStatus::Complete, Some(&exchange.model)).await?;
    store.update_reply(reply.id, &exchange.reply, MessageStatus::Complete, Some(&exchange.stats)).await?;
    Ok(chat)
}

fn in_words(error: ServeError, port: u16) -> String {
    match error {
        ServeError::Bind { source, .. } if source.kind() == std::io::ErrorKind::AddrInUse => {
            format!("port {port} is in use by another program: choose another port")
        }
        ServeError::Bind { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied => {
            format!("port {port} needs administrator rights: choose one above 1023")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_range_is_what_validate_enforces() {
        for (port, ok) in [(0, false), (1, true), (8484, true), (65535, true)] {
            let settings = ServerSettings { port, ..ServerSettings::default() };
            assert_eq!(settings.validate().is_ok(), ok, "{port}");
        }
        let refused = ServerSettings { port: 0, ..ServerSettings::default() }.validate().unwrap_err();
        assert_eq!(refused.field, "port");
    }
}
