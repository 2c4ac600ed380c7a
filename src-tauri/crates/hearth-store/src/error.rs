use hearth_core::{ChatId, MessageId};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the history database {path}: {source}")]
    Open { path: String, source: sqlx::Error },
    #[error("the history database {path} was written by a newer Hearth (schema version {version}); update Hearth — the file was left untouched")]
    NewerSchema { path: String, version: i64 },
    #[error("cannot upgrade the history database {path}: {source}")]
    Migrate { path: String, source: sqlx::migrate::MigrateError },
    #[error("chat {0} does not exist")]
    ChatNotFound(ChatId),
    #[error("message {0} does not exist")]
    MessageNotFound(MessageId),
    #[error("the history database holds an invalid row: {0}")]
    InvalidRow(String),
    #[error("history database error: {0}")]
    Db(#[from] sqlx::Error),
}
