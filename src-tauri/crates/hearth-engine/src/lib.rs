//! hearth-engine runs GGUF models in-process with llama.cpp (through llama-cpp-2).
//!
//! One dedicated OS thread owns the llama.cpp backend, the model and its context; [`Engine`] is a
//! cheap, cloneable handle that sends it messages, each carrying its own reply channel. The engine
//! implements [`hearth_core::ChatBackend`], so the chat flow does not know it is local.

pub mod bench;
mod load;
mod prefix;
mod sampler;
mod session;
mod stop;
mod template;
mod worker;

pub use hearth_gguf::{GgufError, MetaValue, ValidatedGguf, validate};
pub use template::{ChatTemplate, TemplateError};
pub use hearth_core::{FlashAttention, KvType, LoadParams};
pub use load::{gpu_free_memory, physical_cores};
pub use worker::{Engine, EngineError};
