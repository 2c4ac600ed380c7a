//! Hearth's MCP client, on the official Rust SDK (rmcp): servers started over stdio or reached
//! over Streamable HTTP, each supervised by [`McpHub`] (started lazily, its state and its
//! failure's words kept, restarted on demand, stopped at quit), their tools listed and called with
//! progress and cancellation; one that asks to sign in is signed in to with OAuth ([`oauth`]); a
//! server's questions to the user mid-call (elicitation) go to the app's asker ([`questions`]).
//!
//! The crate knows nothing of chats or approval: the app decides which call runs; this crate runs
//! it and says what happened.

mod config;
mod connection;
mod enterprise;
mod hub;
mod idp_sign_in;
pub mod link;
pub mod oauth;
pub mod questions;
mod stdio;

use std::time::Duration;

pub use config::{ConfigError, McpServerConfig, McpTransport, parse_mcp_servers};
pub use connection::{CallOptions, CallProgress, McpTool, ToolOutcome};
pub use hub::{McpHub, McpServerState, McpServerStatus, Timeouts};
pub use tokio_util::sync::CancellationToken;

/// What went wrong with a server or a call, in words a user can act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    #[error("could not start {command:?}: {why} (is it installed, and on the PATH?)")]
    Spawn { command: String, why: String },
    #[error("the server did not complete MCP's handshake: {0}")]
    Handshake(String),
    /// `challenge`: its `WWW-Authenticate` header, what signing in starts from (`oauth::sign_in`).
    #[error("the server asks to sign in (OAuth): sign in to it, or add a token it takes as an Authorization header")]
    SignIn { challenge: String },
    #[error("signing in failed: {0}")]
    SignInFailed(String),
    #[error("the server did not answer within {} s", .0.as_secs())]
    NoAnswer(Duration),
    #[error("{0:?} is not a header Hearth can send")]
    Header(String),
    #[error("the request failed: {0}")]
    Request(String),
    #[error("the call's arguments cannot be sent: {0}")]
    Arguments(String),
    #[error("the server refused the call: {0}")]
    Refused(String),
    #[error("the server closed the connection")]
    Closed,
    #[error("the tool said nothing for {} s, so Hearth stopped waiting", .0.as_secs())]
    Silent(Duration),
    #[error("the call was stopped")]
    Cancelled,
    #[error("no MCP server is named {0:?}")]
    UnknownServer(String),
    #[error("the server {0:?} is switched off")]
    Off(String),
    #[error("the server {server:?} has no tool {tool:?}")]
    UnknownTool { server: String, tool: String },
    #[error("the tool {tool:?} of {server:?} is switched off")]
    ToolOff { server: String, tool: String },
    /// The server failed: the error, then what it said (its last stderr line, how it ended).
    #[error("MCP server {server:?}: {message}")]
    Failed { server: String, message: String },
}
