//! hearth-engine runs GGUF models with llama.cpp (through llama-cpp-2) in a supervised process.
//!
//! Inside the engine process one dedicated OS thread owns the llama.cpp backend, the model and
//! its context ([`LocalEngine`]); the app holds an [`Engine`], a cheap, cloneable handle that
//! sends the process framed requests, each with its own reply channel on the app's side (see
//! [`host`]). Both implement [`hearth_core::ChatBackend`], so the chat flow does not know it is
//! local, nor that it crosses a process.

pub mod bench;
pub mod checkpoints;
mod decoding;
pub mod devices;
mod draft_threads;
mod drafter;
mod embed;
pub mod host;
mod idle_cores;
mod interrupt;
mod kept;
pub mod kv_memory;
mod llama_log;
mod load;
mod local;
mod lookup;
mod offload;
mod prefix;
mod rpc;
mod sampler;
mod session;
mod stop;
mod template;
mod threads;
pub mod tools;
mod vision;

pub use hearth_core::{FlashAttention, KvType, LoadParams};
pub use hearth_gguf::{GgufError, MetaValue, ValidatedGguf, validate};
pub use host::{Engine, HostProgram};
pub use load::physical_cores;
pub use local::{EngineError, HeldMemory, LocalEngine};
pub use template::{ChatTemplate, TemplateError};
