use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::migrate::{MigrateError, Migrator};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};

use hearth_core::{
    ChatId, ChatSummary, HistoryStore, MessageId, MessageStatus, ReplyStats, Role, StoredMessage,
};

use crate::StoreError;
use crate::rows::{ChatRow, MESSAGE_COLUMNS, MessageRow};

static MIGRATOR: Migrator = sqlx::migrate!("../../../migrations");

/// Longest automatic chat title, in characters.
const TITLE_CHARS: usize = 60;

/// Chat history in one SQLite file. Cloning shares the connection pool.
#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
}

impl Store {
    /// Opens (creating if needed) the database at `path`, runs pending migrations and marks
    /// replies left streaming by a crash as interrupted.
    pub async fn open(path: &Path) -> Result<Store, StoreError> {
        let shown = path.display().to_string();
        let options = SqliteConnectOptions::from_str("sqlite:")
            .map_err(|source| StoreError::Open { path: shown.clone(), source })?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // With WAL, NORMAL never corrupts and loses nothing on an app crash.
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(|source| StoreError::Open { path: shown.clone(), source })?;
        MIGRATOR.run(&pool).await.map_err(|source| match source {
            MigrateError::VersionMissing(version) => StoreError::NewerSchema { path: shown.clone(), version },
            source => StoreError::Migrate { path: shown.clone(), source },
        })?;
        let store = Store { pool };
        let interrupted = store.mark_interrupted().await?;
        if interrupted > 0 {
            tracing::warn!(interrupted, "replies left streaming by a crash were marked interrupted");
        }
        Ok(store)
    }

    async fn mark_interrupted(&self) -> Result<u64, StoreError> {
        let done = sqlx::query("UPDATE messages SET status = 'interrupted' WHERE status = 'streaming'")
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }

    pub async fn create_chat(&self) -> Result<ChatSummary, StoreError> {
        let now = now_ms();
        let row: ChatRow = sqlx::query_as(
            "INSERT INTO chats (title, created_at, updated_at) VALUES ('', ?1, ?1)
             RETURNING id, title, updated_at",
        )
        .bind(now)
        .fetch_one(&self.pool)
        .await?;
        Ok(row.into())
    }

    /// All chats, most recently active first.
    pub async fn list_chats(&self) -> Result<Vec<ChatSummary>, StoreError> {
        let rows: Vec<ChatRow> = sqlx::query_as(
            "SELECT id, title, updated_at FROM chats ORDER BY updated_at DESC, id DESC",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    pub async fn setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar("SELECT value FROM settings WHERE key = ?")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?)
    }

    pub async fn set_setting(&self, key: &str, value: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO settings (key, value) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(key)
        .bind(value)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn delete_setting(&self, key: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM settings WHERE key = ?").bind(key).execute(&self.pool).await?;
        Ok(())
    }

    /// SQLite's journal mode, e.g. "wal".
    pub async fn journal_mode(&self) -> Result<String, StoreError> {
        Ok(sqlx::query_scalar("PRAGMA journal_mode").fetch_one(&self.pool).await?)
    }

    /// Closes every connection, checkpointing the WAL.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

impl HistoryStore for Store {
    type Error = StoreError;

    async fn messages(&self, chat: ChatId) -> Result<Vec<StoredMessage>, StoreError> {
        let exists: Option<i64> = sqlx::query_scalar("SELECT id FROM chats WHERE id = ?")
            .bind(chat)
            .fetch_optional(&self.pool)
            .await?;
        exists.ok_or(StoreError::ChatNotFound(chat))?;
        let rows: Vec<MessageRow> = sqlx::query_as(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE chat_id = ? ORDER BY id"
        ))
        .bind(chat)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(TryInto::try_into).collect()
    }

    /// Adds a message; the first user message also titles an untitled chat.
    async fn append_message(
        &self,
        chat: ChatId,
        role: Role,
        content: &str,
        status: MessageStatus,
        model: Option<&str>,
    ) -> Result<StoredMessage, StoreError> {
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        let touched = sqlx::query(
            "UPDATE chats SET updated_at = ?2,
                 title = CASE WHEN title = '' AND ?3 != '' THEN ?3 ELSE title END
             WHERE id = ?1",
        )
        .bind(chat)
        .bind(now)
        .bind(if role == Role::User { title_from(content) } else { String::new() })
        .execute(&mut *tx)
        .await?;
        if touched.rows_affected() == 0 {
            return Err(StoreError::ChatNotFound(chat));
        }
        let row: MessageRow = sqlx::query_as(&format!(
            "INSERT INTO messages (chat_id, role, content, status, model, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING {MESSAGE_COLUMNS}"
        ))
        .bind(chat)
        .bind(role.as_str())
        .bind(content)
        .bind(status.as_str())
        .bind(model)
        .bind(now)
        .bind(now)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        row.try_into()
    }

    /// Saves a reply's text so far and its status; `stats` only once it has finished.
    async fn update_reply(
        &self,
        id: MessageId,
        content: &str,
        status: MessageStatus,
        stats: Option<&ReplyStats>,
    ) -> Result<StoredMessage, StoreError> {
        let stats = stats.map(|s| serde_json::to_string(s).expect("stats serialize"));
        let row: Option<MessageRow> = sqlx::query_as(&format!(
            "UPDATE messages SET content = ?, status = ?, stats = COALESCE(?, stats), updated_at = ?
             WHERE id = ? RETURNING {MESSAGE_COLUMNS}"
        ))
        .bind(content)
        .bind(status.as_str())
        .bind(stats)
        .bind(now_ms())
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.ok_or(StoreError::MessageNotFound(id))?.try_into()
    }
}

/// The first line of a message, shortened to a title.
fn title_from(content: &str) -> String {
    let line = content.trim().lines().next().unwrap_or("").trim();
    if line.chars().count() <= TITLE_CHARS {
        return line.to_owned();
    }
    let cut: String = line.chars().take(TITLE_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::title_from;

    #[test]
    fn titles_come_from_the_first_line() {
        let long = "a".repeat(80);
        let cases = [
            ("Hello there", "Hello there"),
            ("  \n first line \nsecond", "first line"),
            ("", ""),
            (long.as_str(), &format!("{}…", "a".repeat(59))),
        ];
        for (content, expected) in cases {
            assert_eq!(title_from(content), expected, "{content:?}");
        }
    }
}
