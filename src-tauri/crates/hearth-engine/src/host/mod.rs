//! The engine in its own process. llama.cpp aborts the whole process on a failed assertion, a
//! device out of memory or a crafted file; in a child process that costs a reply, not the app.
//!
//! - [`Engine`] (the app's side) starts the process, sends requests as frames and routes what
//!   comes back to each request's channel; when the process dies it fails what was in flight
//!   with the cause in words, starts a new one and loads the model again.
//! - The process (`serve_stdio`, reached through [`serve_if_asked`] in the app's and the CLI's
//!   `main`) runs the in-process [`crate::LocalEngine`] and relays its events.
//! - Only [`protocol`]'s types cross the boundary: requests with ids, and deltas, progress and
//!   results tagged with them.

mod backoff;
mod cause;
mod child;
mod program;
pub mod protocol;
mod supervisor;
mod timing;

pub use backoff::RestartBackoff;
pub use child::{HOST_ARG, TEST_HOOKS_ENV, serve_if_asked, serve_stdio};
pub use program::HostProgram;
pub use supervisor::Engine;
pub use timing::{QUIT_WAIT, STOP_ANSWER};
