//! Stand-ins for Hearth's tests where the real part is not what is under test or cannot be had
//! here: a [`ScriptedBackend`] that plays replies step by step on tokio's clock (a paused clock
//! makes a test of timing exact and instant); a [`MemoryStore`] that keeps chats as the SQLite
//! store does, records every write with its time, and fails writes on demand; local servers
//! speaking the Hugging Face hub's and the providers' real wire formats ([`fake_hub`],
//! [`fake_provider`], also as the `fake_hub` and `fake_provider` programs the end-to-end suite
//! starts); hostile GGUF files built from a real one ([`gguf`]); llama.cpp's programs the tests run
//! beside Hearth, once built ([`llama_programs`]). Where the real model, the real
//! store or a real HTTP peer can run, tests use those.

mod backend;
pub mod fake_hub;
pub mod fake_provider;
pub mod gguf;
pub mod images;
pub mod llama_programs;
mod store;

pub use backend::{Asked, ScriptedBackend, Step};
pub use store::{MemoryStore, StoreFault, Write};
