//! hearth-store keeps chat history in one SQLite file (sqlx, WAL mode).
//!
//! Migrations live in the repository's top-level `migrations/` and run on open. A reply is saved
//! while it streams, so a crash loses at most one flush interval of text; on the next open, replies
//! left `streaming` are marked `interrupted`.

mod archive;
mod error;
mod header;
mod markdown;
mod rows;
mod search;
mod store;

pub use archive::{Archive, ArchivedChat, ArchivedMessage, ImportError};
pub use error::StoreError;
pub use markdown::to_markdown;
pub use search::fts_query;
pub use store::Store;
