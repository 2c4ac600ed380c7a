//! What can go wrong finding, fetching and keeping models, in words a user can act on.

use hearth_gguf::GgufError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HubError {
    #[error("\"{name}\" is not an acceptable name: {why}")]
    BadName { name: String, why: &'static str },
    #[error("could not reach the model hub at {endpoint}: {detail}. Check the network connection")]
    Network { endpoint: String, detail: String },
    #[error("{repo} is gated or private: accept its license on huggingface.co, then add your Hugging Face token in Models → Discover")]
    Auth { repo: String },
    #[error("{what} was not found on the hub")]
    NotFound { what: String },
    #[error("the hub refused the request ({status}): {detail}")]
    Server { status: u16, detail: String },
    #[error("the hub is rate limiting requests; try again in a minute")]
    RateLimited,
    #[error("the disk is full: {file} needs {needed} MB more on {dir}, which has {available} MB free. Free some space, then resume")]
    DiskFull { file: String, dir: String, needed: u64, available: u64 },
    #[error("{file} arrived damaged (its sha256 is {actual}, the hub says {expected}); the file was removed: download it again")]
    HashMismatch { file: String, expected: String, actual: String },
    #[error("the hub gives no sha256 for {file}; Hearth keeps no model it cannot verify")]
    NoChecksum { file: String },
    #[error("{file} ended after {got} of {expected} bytes")]
    Incomplete { file: String, got: u64, expected: u64 },
    /// The connection stayed open but nothing arrived: asked again from where it stopped.
    #[error("the hub sent nothing of {file} for {seconds} s after {got} bytes")]
    Stalled { file: String, got: u64, seconds: u64 },
    /// An answer past its cap: an endpoint that is not the hub, or a hub gone wrong.
    #[error("{what} from {endpoint} is too large to read; check that the hub's address is right")]
    TooLarge { what: String, endpoint: String },
    #[error("the model's header is larger than {limit} MB; it cannot be read before downloading")]
    HeaderTooLarge { limit: u64 },
    #[error(transparent)]
    Gguf(#[from] GgufError),
    #[error("{path}: {detail}")]
    Io { path: String, detail: String },
    #[error("no download {id}")]
    NoDownload { id: String },
    #[error("{path} is not in Hearth's library")]
    NotInLibrary { path: String },
}

impl HubError {
    pub fn io(path: &std::path::Path, error: &std::io::Error) -> Self {
        HubError::Io { path: path.display().to_string(), detail: error.to_string() }
    }

    /// Worth trying again after a pause: the connection, not the request, failed.
    pub fn is_transient(&self) -> bool {
        match self {
            HubError::Network { .. } | HubError::Incomplete { .. } | HubError::Stalled { .. } | HubError::RateLimited => true,
            HubError::Server { status, .. } => *status >= 500,
            _ => false,
        }
    }

    pub(crate) fn from_hf(error: hf_hub::HFError, repo: &str, endpoint: &str) -> Self {
        use hf_hub::HFError as E;
        match error {
            E::AuthRequired { .. } | E::Forbidden { .. } => HubError::Auth { repo: repo.to_owned() },
            E::RepoNotFound { .. } => HubError::NotFound { what: format!("repository {repo}") },
            E::EntryNotFound { path, .. } => HubError::NotFound { what: format!("{path} in {repo}") },
            E::RevisionNotFound { revision, .. } => HubError::NotFound { what: format!("revision {revision} of {repo}") },
            E::RateLimited { .. } => HubError::RateLimited,
            E::Http { context } if matches!(context.status.as_u16(), 401 | 403) => HubError::Auth { repo: repo.to_owned() },
            E::Http { context } if context.status.as_u16() == 404 => HubError::NotFound { what: format!("repository {repo}") },
            E::Http { context } => {
                let status = context.status.as_u16();
                let detail = context.server_message.clone().unwrap_or_else(|| context.body.chars().take(200).collect());
                HubError::Server { status, detail: if detail.is_empty() { "no details".into() } else { detail } }
            }
            E::Io(e) => HubError::Io { path: repo.to_owned(), detail: e.to_string() },
            other => HubError::Network { endpoint: endpoint.to_owned(), detail: root_cause(&other) },
        }
    }
}

/// The innermost cause of an error chain: reqwest's outer message says little ("error sending request").
pub(crate) fn root_cause(error: &dyn std::error::Error) -> String {
    let mut cause = error;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    cause.to_string()
}
