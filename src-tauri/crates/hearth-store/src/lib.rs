//! hearth-store keeps chat history in one SQLite file (sqlx, WAL mode).
//!
//! Migrations live in the repository's top-level `migrations/` and run on open. A reply is saved
//! while it streams, so a crash loses at most one flush interval of text; on the next open, replies
//! left `streaming` are marked `interrupted`.

mod error;
mod rows;
mod search;
mod store;

pub use error::StoreError;
pub use search::fts_query;
pub use store::Store;
