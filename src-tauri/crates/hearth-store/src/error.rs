use hearth_core::{ChatId, MessageId};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the history database {path}: {source}")]
    Open { path: String, source: sqlx::Error },
    #[error(
        "the history database {path} was written by a newer Hearth (schema version {version}); update Hearth — the file was left untouched"
    )]
    NewerSchema { path: String, version: i64 },
    #[error("cannot upgrade the history database {path}: {source}")]
    Migrate { path: String, source: sqlx::migrate::MigrateError },
    /// SQLite found the file damaged or not a database at all. Nothing is written to it.
    #[error("cannot read the history database {path}: {source}")]
    Unreadable { path: String, source: std::io::Error },
    #[error("the history database{} is damaged ({detail}). Hearth left the file as it is: quit Hearth, then restore the file from a backup, or move it elsewhere to start a new, empty history", path.as_ref().map(|p| format!(" {p}")).unwrap_or_default())]
    Damaged { path: Option<String>, detail: String },
    /// Another Hearth (the app or `hearth-cli --db`) has this history open.
    #[error("the history database {path} is open in another Hearth (the app or hearth-cli); close that one first — nothing was changed")]
    InUse { path: String },
    #[error("chat {0} does not exist")]
    ChatNotFound(ChatId),
    #[error("message {0} does not exist")]
    MessageNotFound(MessageId),
    #[error("the history database holds an invalid row: {0}")]
    InvalidRow(String),
    #[error("history database error: {0}")]
    Db(sqlx::Error),
}

impl StoreError {
    /// An error met while opening the file at `path`, naming it.
    pub(crate) fn opening(path: &str, error: impl Into<StoreError>) -> StoreError {
        match error.into() {
            StoreError::Damaged { detail, .. } => StoreError::Damaged { path: Some(path.to_owned()), detail },
            StoreError::Db(source) => StoreError::Open { path: path.to_owned(), source },
            other => other,
        }
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        if is_damage(&error) {
            let detail = match &error {
                sqlx::Error::Database(db) => db.message().to_owned(),
                other => other.to_string(),
            };
            return StoreError::Damaged { path: None, detail };
        }
        StoreError::Db(error)
    }
}

/// SQLITE_CORRUPT (11) or SQLITE_NOTADB (26), extended codes included.
fn is_damage(error: &sqlx::Error) -> bool {
    let sqlx::Error::Database(db) = error else { return false };
    db.code().and_then(|code| code.parse::<i32>().ok()).is_some_and(|code| matches!(code & 0xff, 11 | 26))
}
