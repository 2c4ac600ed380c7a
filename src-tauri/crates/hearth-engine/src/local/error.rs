//! What a model load or the engine itself can fail with, in words for the user.

use hearth_gguf::GgufError;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum EngineError {
    #[error(transparent)]
    InvalidFile(#[from] GgufError),
    /// `reason` is llama.cpp's own last error line.
    #[error("llama.cpp could not load {path}: {reason}")]
    Load { path: String, reason: String },
    /// The engine process died while loading (llama.cpp aborted on the file or the settings).
    #[error("loading {path} crashed the engine — {cause}. Check the file and its load settings")]
    Crashed { path: String, cause: String },
    #[error("could not create a context of {n_ctx} tokens for {path}: lower the context length or free memory")]
    Context { path: String, n_ctx: u32 },
    #[error("loading {path} was cancelled")]
    LoadCancelled { path: String },
    #[error("the engine stopped unexpectedly; restart Hearth")]
    Gone,
    /// The engine keeps dying; the words say when it starts again.
    #[error("{0}")]
    Restarting(String),
    #[error("invalid load settings: {0}")]
    InvalidSettings(String),
    /// A device the load settings name cannot be used (an RPC server that does not answer).
    #[error("{0}")]
    Device(String),
    /// An embedding model could not read texts (or is none).
    #[error("{path} cannot embed texts: {reason}")]
    Embed { path: String, reason: String },
    #[error("benchmark failed: {0}")]
    Bench(String),
}
