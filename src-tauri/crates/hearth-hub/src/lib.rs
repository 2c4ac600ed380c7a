//! hearth-hub: finding, fetching and keeping GGUF models.
//!
//! [`Hub`] talks to Hugging Face (or any endpoint speaking its API: `HF_ENDPOINT`) through hf-hub:
//! search, a repository's GGUF files grouped by quantization, a model's header read with range
//! requests for a [`fit`] estimate before download. [`Downloads`] fetches files into the standard
//! Hugging Face cache ([`HubCache`]) with resume, retries, sha256 checks and a free-disk check.
//! [`Library`] lists what is on disk: the HF cache, Hearth's models folder and imported files.
//! [`starter`] picks the model the welcome screen offers a new user.

mod api;
mod cache;
mod download;
mod error;
pub mod fit;
mod header;
mod library;
pub mod names;
mod search;
pub mod starter;

pub use cache::{CachedFile, HubCache};
pub use download::{Download, DownloadState, Downloads, RetryPolicy};
pub use error::HubError;
pub use fit::{FitEstimate, FitVerdict, Memory};
pub use library::{ImportMode, Library, LibraryModel, ModelSource};
pub use search::{HubRepo, RepoFile, RepoQuant, group_quants, projector_for};
pub use starter::{Machine, StarterModel, starter};

use std::sync::{Arc, RwLock};
use std::time::Duration;

use hf_hub::HFClient;

/// Where the hub is and who we are to it.
#[derive(Debug, Clone, Default)]
pub struct HubConfig {
    /// The hub's base URL; `None`: `HF_ENDPOINT`, else huggingface.co.
    pub endpoint: Option<String>,
    /// For gated and private repositories.
    pub token: Option<String>,
    /// The longest one of the hub's JSON answers (a search, a file list) may take; `None`: 60 s.
    pub answer_deadline: Option<Duration>,
}

/// A handle on the hub; cheap to clone. The token can change while it lives.
#[derive(Clone)]
pub struct Hub {
    clients: Arc<RwLock<Clients>>,
    config: HubConfig,
}

/// hf-hub for files, [`api::Api`] for JSON answers: one HTTP client, one token.
#[derive(Clone)]
struct Clients {
    files: HFClient,
    api: api::Api,
}

impl Hub {
    pub fn new(config: &HubConfig) -> Result<Hub, HubError> {
        let clients = build_clients(config)?;
        Ok(Hub { clients: Arc::new(RwLock::new(clients)), config: HubConfig { token: None, ..config.clone() } })
    }

    /// Uses `token` (or none) from now on.
    pub fn set_token(&self, token: Option<&str>) -> Result<(), HubError> {
        let clients = build_clients(&HubConfig { token: token.map(str::to_owned), ..self.config.clone() })?;
        *self.clients.write().expect("hub client lock poisoned") = clients;
        Ok(())
    }

    pub fn endpoint(&self) -> String {
        self.client().endpoint().to_owned()
    }

    fn client(&self) -> HFClient {
        self.clients.read().expect("hub client lock poisoned").files.clone()
    }

    fn api(&self) -> api::Api {
        self.clients.read().expect("hub client lock poisoned").api.clone()
    }

    fn repo(&self, repo: &str) -> Result<hf_hub::HFRepository<hf_hub::RepoTypeModel>, HubError> {
        let (owner, name) = names::repo_id(repo)?;
        Ok(self.client().model(owner, name))
    }

    fn error(&self, error: hf_hub::HFError, repo: &str) -> HubError {
        HubError::from_hf(error, repo, &self.endpoint())
    }
}

/// The longest the hub may go silent in the middle of an answer.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

fn build_clients(config: &HubConfig) -> Result<Clients, HubError> {
    let (endpoint, token) = (config.endpoint.as_deref(), config.token.as_deref());
    // Every read has a deadline: a hub that stops answering (search, a file list, a header) ends
    // in words instead of a wait for ever; downloads also have their own, shorter one.
    let http = reqwest::Client::builder()
        .user_agent(concat!("Hearth/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(15))
        .read_timeout(READ_TIMEOUT)
        .build()
        .map_err(|e| HubError::Network { endpoint: endpoint.unwrap_or("huggingface.co").into(), detail: e.to_string() })?;
    // Downloads retry themselves (with resume); hf-hub's own retries would hide a dead network.
    let token = token.filter(|t| !t.is_empty());
    let mut builder = HFClient::builder().client(http.clone()).retry_max_attempts(1);
    if let Some(endpoint) = endpoint {
        builder = builder.endpoint(endpoint);
    }
    if let Some(token) = token {
        builder = builder.token(token);
    }
    let files =
        builder.build().map_err(|e| HubError::Network { endpoint: endpoint.unwrap_or("huggingface.co").into(), detail: e.to_string() })?;
    let deadline = config.answer_deadline.unwrap_or(api::ANSWER_DEADLINE);
    let api = api::Api { http, endpoint: files.endpoint().to_owned(), token: token.map(str::to_owned), deadline };
    Ok(Clients { files, api })
}
