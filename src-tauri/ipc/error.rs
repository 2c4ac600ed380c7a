use serde::Serialize;
use ts_rs::TS;

use hearth_app::EmbeddingModelError;
use hearth_app::attachments::{AttachFailure, PreviewError};
use hearth_app::mcp_sign_in::SignInError;
use hearth_app::{ChatModelError, LoadError, SettingsError};
use hearth_core::{BackendError, FieldError, ProviderError, SamplingError, TurnError};
use hearth_engine::EngineError;
use hearth_store::StoreError;

/// What a failed command returns to the window: a kind to branch on and words to show.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct IpcError {
    pub kind: IpcErrorKind,
    pub message: String,
    /// Seconds a provider asked to wait before retrying (rate limits).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub retry_after_s: Option<u64>,
    /// The field (or comma-separated fields) the error concerns, by the name the window's types
    /// use (`topP`, `nCtx`, `baseUrl`, `name`), mostly with `invalidInput`; a turn whose chat's
    /// model could not be readied says `model`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub field: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum IpcErrorKind {
    NotFound,
    InvalidInput,
    NoModel,
    Busy,
    Engine,
    Store,
    /// A file could not be read or written.
    File,
    /// A provider wants a (different) API key: no key, 401, 403.
    ProviderAuth,
    /// A provider is rate limiting; `retryAfterS` says how long to wait where it said.
    RateLimited,
    /// A provider could not be reached or did not answer in time.
    Network,
    /// Anything else a provider did: no such model, refused request, its own failure, a stream
    /// cut off or unreadable.
    Provider,
    /// The OS keychain (or the key file) failed.
    Keychain,
    /// A gated or private Hugging Face repository wants a (different) token.
    HubAuth,
    /// The disk has no room for a download.
    DiskFull,
    /// A download failed otherwise (damaged on the way, the hub refused, …).
    Download,
    /// An update was refused or could not be installed (its signature, its manifest, the
    /// package tool), or this build does not update itself.
    Update,
}

impl IpcErrorKind {
    /// Every kind, for the window's generated contract.
    pub const ALL: [IpcErrorKind; 16] = [
        IpcErrorKind::NotFound,
        IpcErrorKind::InvalidInput,
        IpcErrorKind::NoModel,
        IpcErrorKind::Busy,
        IpcErrorKind::Engine,
        IpcErrorKind::Store,
        IpcErrorKind::File,
        IpcErrorKind::ProviderAuth,
        IpcErrorKind::RateLimited,
        IpcErrorKind::Network,
        IpcErrorKind::Provider,
        IpcErrorKind::Keychain,
        IpcErrorKind::HubAuth,
        IpcErrorKind::DiskFull,
        IpcErrorKind::Download,
        IpcErrorKind::Update,
    ];
}

impl IpcError {
    pub fn new(kind: IpcErrorKind, message: impl ToString) -> Self {
        IpcError { kind, message: message.to_string(), retry_after_s: None, field: None }
    }
}

impl IpcError {
    /// The same error, said to concern `field`.
    pub fn concerning(self, field: &str) -> Self {
        IpcError { field: Some(field.to_owned()), ..self }
    }
}

impl From<FieldError> for IpcError {
    fn from(e: FieldError) -> Self {
        IpcError { field: Some(e.field), ..IpcError::new(IpcErrorKind::InvalidInput, e.message) }
    }
}

impl From<SamplingError> for IpcError {
    fn from(e: SamplingError) -> Self {
        FieldError::from(e).into()
    }
}

impl From<SettingsError> for IpcError {
    fn from(e: SettingsError) -> Self {
        match e {
            SettingsError::Store(e) => e.into(),
            SettingsError::Invalid(e) => e.into(),
            SettingsError::Key(e) => e.into(),
        }
    }
}

impl From<LoadError> for IpcError {
    fn from(e: LoadError) -> Self {
        let kind = match &e {
            LoadError::NoModel => IpcErrorKind::NoModel,
            LoadError::Store(_) => IpcErrorKind::Store,
            LoadError::File(_) => IpcErrorKind::File,
            LoadError::Failed { .. } => IpcErrorKind::Engine,
        };
        IpcError::new(kind, e)
    }
}

impl From<ProviderError> for IpcError {
    fn from(e: ProviderError) -> Self {
        let kind = match e {
            ProviderError::NoKey { .. }
            | ProviderError::Unauthorized { .. }
            | ProviderError::Forbidden { .. }
            | ProviderError::PlainHttp { .. }
            | ProviderError::Redirected { .. } => IpcErrorKind::ProviderAuth,
            ProviderError::RateLimited { .. } => IpcErrorKind::RateLimited,
            ProviderError::Timeout { .. } | ProviderError::Unreachable { .. } => IpcErrorKind::Network,
            ProviderError::UnknownProvider { .. }
            | ProviderError::ModelNotFound { .. }
            | ProviderError::BadRequest { .. }
            | ProviderError::Server { .. }
            | ProviderError::StreamCut { .. }
            | ProviderError::Malformed { .. } => IpcErrorKind::Provider,
        };
        IpcError { retry_after_s: e.retry_after_s(), ..IpcError::new(kind, e) }
    }
}

impl From<hearth_providers::KeyError> for IpcError {
    fn from(e: hearth_providers::KeyError) -> Self {
        IpcError::new(IpcErrorKind::Keychain, e)
    }
}

impl From<StoreError> for IpcError {
    fn from(e: StoreError) -> Self {
        let kind = match e {
            StoreError::ChatNotFound(_) | StoreError::MessageNotFound(_) => IpcErrorKind::NotFound,
            _ => IpcErrorKind::Store,
        };
        IpcError::new(kind, e)
    }
}

impl From<AttachFailure> for IpcError {
    fn from(e: AttachFailure) -> Self {
        match e {
            AttachFailure::File(e) => IpcError::new(IpcErrorKind::File, e),
            AttachFailure::Store(e) => e.into(),
        }
    }
}

impl From<PreviewError> for IpcError {
    fn from(e: PreviewError) -> Self {
        match e {
            PreviewError::NotAHash(_) | PreviewError::NotAnImage(_) => IpcError::new(IpcErrorKind::InvalidInput, e),
            PreviewError::Unknown(_) => IpcError::new(IpcErrorKind::NotFound, e),
            PreviewError::Store(e) => e.into(),
        }
    }
}

impl From<EmbeddingModelError> for IpcError {
    fn from(e: EmbeddingModelError) -> Self {
        match e {
            EmbeddingModelError::Refused(_) | EmbeddingModelError::Unreadable { .. } => IpcError::new(IpcErrorKind::File, e),
            EmbeddingModelError::Store(e) => e.into(),
        }
    }
}

impl From<SignInError> for IpcError {
    fn from(e: SignInError) -> Self {
        let kind = match e {
            SignInError::Settings(e) => return e.into(),
            SignInError::Unknown(_) => IpcErrorKind::NotFound,
            SignInError::NotHttp(_) | SignInError::Page(_) | SignInError::Credentials(_) => IpcErrorKind::InvalidInput,
            SignInError::Browser(_) => IpcErrorKind::File,
            SignInError::TimedOut | SignInError::Mcp(_) => IpcErrorKind::Network,
        };
        IpcError::new(kind, e)
    }
}

impl From<ChatModelError> for IpcError {
    fn from(e: ChatModelError) -> Self {
        match e {
            ChatModelError::Store(e) => e.into(),
            ChatModelError::Load(e) => e.into(),
            ChatModelError::Missing { .. } | ChatModelError::NoFile { .. } => IpcError::new(IpcErrorKind::File, e),
        }
    }
}

impl From<BackendError> for IpcError {
    fn from(e: BackendError) -> Self {
        let kind = match e {
            BackendError::NoModel => IpcErrorKind::NoModel,
            BackendError::ContextOverflow { .. } | BackendError::InvalidRequest(_) | BackendError::DraftModel { .. } => {
                IpcErrorKind::InvalidInput
            }
            BackendError::Engine(_) | BackendError::EngineGone | BackendError::EngineCrashed { .. } => IpcErrorKind::Engine,
            BackendError::EngineRestarting { retry_after_s, .. } => {
                return IpcError { retry_after_s: Some(retry_after_s), ..IpcError::new(IpcErrorKind::Engine, e) };
            }
            BackendError::Provider(provider) => return provider.into(),
        };
        IpcError::new(kind, e)
    }
}

impl From<TurnError> for IpcError {
    fn from(e: TurnError) -> Self {
        match e {
            TurnError::InvalidInput(_) => IpcError::new(IpcErrorKind::InvalidInput, e),
            TurnError::Busy => IpcError::new(IpcErrorKind::Busy, e),
            TurnError::Store(_) | TurnError::ReplyNotSaved(_) => IpcError::new(IpcErrorKind::Store, e),
            TurnError::Backend { error, .. } => error.into(),
        }
    }
}

impl From<EngineError> for IpcError {
    fn from(e: EngineError) -> Self {
        IpcError::new(IpcErrorKind::Engine, e)
    }
}
