//! Hearth as a local OpenAI-compatible server: the loaded model for other programs (editors,
//! scripts, agents) at `/v1/models` and `/v1/chat/completions`, streamed or not, in OpenAI's
//! shapes and with its errors. Off unless started; on loopback unless the user opts into the
//! network, which needs an API key (compared in constant time).

mod auth;
mod chat;
mod error;
mod guard;
mod library;
mod log;
mod request;
mod serve;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::routing::{get, post};
use tokio::net::TcpListener;

use hearth_core::{ChatMessage, ReplyStats, SamplingParams};
use hearth_engine::Engine;

use crate::library::Models;

pub use error::ApiError;
pub use guard::{Guard, normalize_origin};
pub use library::{LoadFailure, ModelLibrary};
pub use log::{RequestLog, RequestRecord};
pub use request::{ChatRequest, CompletionRequest};
pub use serve::Limits;

use crate::serve::Queue;

/// Where the server listens and who may call it.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub host: IpAddr,
    pub port: u16,
    /// Required as `Authorization: Bearer <key>` when set; needed to listen beyond loopback.
    pub api_key: Option<String>,
    /// What a request's sampling fields change (the user's settings; the defaults in the CLI).
    pub sampling: SamplingParams,
    /// Web origins (`scheme://host[:port]`, or `*`) whose pages may call the server, besides
    /// this machine's own; empty by default (`guard.rs`).
    pub allowed_origins: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("listening on {host} opens Hearth to the network: set an API key first (only 127.0.0.1 and ::1 need none)")]
    NetworkNeedsKey { host: IpAddr },
    #[error("the API key is empty")]
    EmptyKey,
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
}

/// What every handler shares.
#[derive(Clone)]
pub struct ServerState {
    engine: Engine,
    sampling: Arc<SamplingParams>,
    api_key: Option<Arc<str>>,
    /// Which hosts and web origins are served.
    guard: Arc<Guard>,
    next_id: Arc<AtomicU64>,
    /// Unix seconds: the `created` of the listed model.
    started: u64,
    log: RequestLog,
    /// What may be loaded on request, and the lock that keeps a load from a reply's feet.
    models: Models,
    /// Told of every request answered in full (the app saves them as chats when asked to).
    on_exchange: Option<OnExchange>,
    /// The requests in flight, and the server's bounds.
    queue: Queue,
}

/// A request answered in full: what the client sent and what the model wrote.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub client: String,
    pub model: String,
    /// The conversation sent (empty for a plain prompt).
    pub messages: Vec<ChatMessage>,
    /// A `/v1/completions` prompt.
    pub prompt: Option<String>,
    pub reply: String,
    pub stats: ReplyStats,
}

pub type OnExchange = Arc<dyn Fn(Exchange) + Send + Sync>;

impl ServerState {
    /// `log` keeps the requests answered (the app shows them; the CLI logs them).
    pub fn new(engine: Engine, config: &ServerConfig, log: RequestLog) -> Self {
        ServerState {
            engine,
            sampling: Arc::new(config.sampling.clone()),
            api_key: config.api_key.as_deref().map(Arc::from),
            guard: Arc::new(Guard { loopback_only: config.host.is_loopback(), allowed_origins: config.allowed_origins.clone() }),
            next_id: Arc::new(AtomicU64::new(1)),
            started: unix_now(),
            log,
            models: Models::default(),
            on_exchange: None,
            queue: Queue::new(Limits::default()),
        }
    }

    /// Serves within `limits` instead of the defaults.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.queue = Queue::new(limits);
        self
    }

    /// Lets requests name any model of `library`: it is loaded when asked for.
    pub fn with_library(mut self, library: Arc<dyn ModelLibrary>) -> Self {
        self.models.library = Some(library);
        self
    }

    /// Calls `on_exchange` with every request answered in full.
    pub fn with_exchanges(mut self, on_exchange: OnExchange) -> Self {
        self.on_exchange = Some(on_exchange);
        self
    }
}

/// The port Hearth's server listens on unless told otherwise.
pub const DEFAULT_PORT: u16 = 8484;

/// Opens the listening socket, refusing a network address without a key.
pub async fn bind(config: &ServerConfig) -> Result<TcpListener, ServeError> {
    if config.api_key.as_deref().is_some_and(|k| k.trim().is_empty()) {
        return Err(ServeError::EmptyKey);
    }
    if !config.host.is_loopback() && config.api_key.is_none() {
        return Err(ServeError::NetworkNeedsKey { host: config.host });
    }
    let addr = SocketAddr::new(config.host, config.port);
    TcpListener::bind(addr).await.map_err(|source| ServeError::Bind { addr, source })
}

pub fn router(state: ServerState) -> Router {
    Router::new()
        .route("/v1/models", get(chat::models))
        .route("/v1/chat/completions", post(chat::chat_completions))
        .route("/v1/completions", post(chat::completions))
        .fallback(chat::no_such_endpoint)
        .layer(axum::middleware::from_fn_with_state(state.clone(), auth::require_key))
        // Outside the key's check: a browser's preflight carries no key.
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard::guard))
        .with_state(state)
}

/// Serves until the listener fails or the process ends.
pub async fn serve(listener: TcpListener, state: ServerState) -> std::io::Result<()> {
    serve_until(listener, state, std::future::pending()).await
}

/// Serves until `stop` completes: the listener closes at once, replies under way finish.
pub async fn serve_until(
    listener: TcpListener,
    state: ServerState,
    stop: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = state.queue.limits();
    serve::serve_until(listener, router(state), limits, stop).await
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
