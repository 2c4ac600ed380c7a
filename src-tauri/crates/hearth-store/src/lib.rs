//! hearth-store keeps chat history in one SQLite file (sqlx, WAL mode).
//!
//! Migrations live in the repository's top-level `migrations/` and run on open. A reply is saved
//! while it streams, so a crash loses at most one flush interval of text; on the next open, replies
//! left `streaming` are marked `interrupted`.

/// `sqlx::FromRow` for a struct, each field read from the column of its name, as sqlx's derive
/// reads it. (The derive needs sqlx's macros crate, which compiles sqlx's SQLite driver a second
/// time, for the build's host: half a minute of a 2-core machine's CPU on every fresh build.)
macro_rules! from_row {
    ($(#[$attr:meta])* $vis:vis struct $name:ident { $($(#[$doc:meta])* $fvis:vis $field:ident: $ty:ty,)* }) => {
        $(#[$attr])*
        $vis struct $name {
            $($(#[$doc])* $fvis $field: $ty,)*
        }

        impl<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow> for $name {
            fn from_row(row: &'r sqlx::sqlite::SqliteRow) -> Result<Self, sqlx::Error> {
                use sqlx::Row;
                Ok(Self { $($field: row.try_get(stringify!($field))?,)* })
            }
        }
    };
}

mod archive;
mod attachments;
mod error;
mod header;
mod markdown;
mod meanings;
mod passages;
mod rows;
mod search;
mod settings;
mod store;

pub use archive::{Archive, ArchivedChat, ArchivedFile, ArchivedMessage, ImportError, hex_sha256};
pub use attachments::{AttachedImage, StoredContent};
pub use error::StoreError;
pub use markdown::to_markdown;
pub use passages::{Indexed, retrieval_query};
pub use search::fts_query;
pub use store::Store;
