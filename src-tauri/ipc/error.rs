use serde::Serialize;
use ts_rs::TS;

use hearth_core::{BackendError, TurnError};
use hearth_engine::EngineError;
use hearth_store::StoreError;

/// What a failed command returns to the window: a kind to branch on and words to show.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct IpcError {
    pub kind: IpcErrorKind,
    pub message: String,
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
}

impl IpcError {
    pub fn new(kind: IpcErrorKind, message: impl ToString) -> Self {
        IpcError { kind, message: message.to_string() }
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

impl From<BackendError> for IpcError {
    fn from(e: BackendError) -> Self {
        let kind = match e {
            BackendError::NoModel => IpcErrorKind::NoModel,
            BackendError::ContextOverflow { .. } | BackendError::InvalidRequest(_) => IpcErrorKind::InvalidInput,
            BackendError::Engine(_) | BackendError::EngineGone => IpcErrorKind::Engine,
        };
        IpcError::new(kind, e)
    }
}

impl From<TurnError> for IpcError {
    fn from(e: TurnError) -> Self {
        match e {
            TurnError::InvalidInput(_) => IpcError::new(IpcErrorKind::InvalidInput, e),
            TurnError::Busy => IpcError::new(IpcErrorKind::Busy, e),
            TurnError::Store(_) => IpcError::new(IpcErrorKind::Store, e),
            TurnError::Backend { error, .. } => error.into(),
        }
    }
}

impl From<EngineError> for IpcError {
    fn from(e: EngineError) -> Self {
        IpcError::new(IpcErrorKind::Engine, e)
    }
}
