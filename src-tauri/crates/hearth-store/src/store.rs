use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::Transaction;
use sqlx::error::BoxDynError;
use sqlx::migrate::{MigrateError, Migration, MigrationSource, MigrationType, Migrator};
use sqlx::sqlite::{Sqlite, SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};

use hearth_core::{
    Attachment, ChatId, ChatSummary, DocumentTexts, HistoryStore, ImageInput, Meaning, MessageId, MessageStatus, ModelTarget, Passage,
    PassageMeaning, ReplyStats, Role, SettingsScope, StoredMessage, TokenProbs, ToolRun,
};

use crate::StoreError;
use crate::rows::{CHAT_COLUMNS, ChatRow, MESSAGE_COLUMNS, MessageRow};

/// The schema's migrations, `(version, description, SQL)`: migrations/*.sql, embedded by build.rs.
const MIGRATIONS: &[(i64, &str, &str)] = include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

/// The migrations as sqlx's `migrate!` embeds them, without its macros crate (which compiles
/// sqlx's SQLite driver a second time, for the build's host).
#[derive(Debug)]
struct EmbeddedMigrations;

type Resolved = Pin<Box<dyn Future<Output = Result<Vec<Migration>, BoxDynError>> + Send>>;

impl MigrationSource<'static> for EmbeddedMigrations {
    fn resolve(self) -> Resolved {
        let migrations = MIGRATIONS
            .iter()
            .map(|&(version, description, sql)| {
                let no_tx = sql.starts_with("-- no-transaction");
                Migration::new(version, description.into(), MigrationType::Simple, sql.into(), no_tx)
            })
            .collect();
        Box::pin(std::future::ready(Ok(migrations)))
    }
}

/// Longest automatic chat title, in characters.
const TITLE_CHARS: usize = 60;

/// Chat history in one SQLite file. Cloning shares the connection pool.
#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
    /// Held until closed or the last clone is dropped: one Hearth (app or CLI) per history.
    lock: std::sync::Arc<std::fs::File>,
    /// Held while a document is cut into passages (one at a time, never the same one twice).
    pub(crate) indexing: std::sync::Arc<tokio::sync::Mutex<()>>,
    /// Passages' vectors read lately (`meanings`).
    pub(crate) meanings: std::sync::Arc<crate::meanings::KeptMeanings>,
}

impl Store {
    /// Opens (creating if needed) the database at `path`, runs pending migrations and marks
    /// replies left streaming by a crash as interrupted.
    pub async fn open(path: &Path) -> Result<Store, StoreError> {
        let shown = path.display().to_string();
        // Before anything else: a second Hearth on a history in use would mark the first one's
        // live replies interrupted.
        let lock = lock_history(path, &shown).await?;
        crate::header::check(path)?;
        let options = SqliteConnectOptions::from_str("sqlite:")
            .map_err(|source| StoreError::opening(&shown, source))?
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
            .map_err(|source| StoreError::opening(&shown, source))?;
        let migrator = Migrator::new(EmbeddedMigrations).await.map_err(|source| StoreError::Migrate { path: shown.clone(), source })?;
        migrator.run(&pool).await.map_err(|source| match source {
            MigrateError::VersionMissing(version) => StoreError::NewerSchema { path: shown.clone(), version },
            MigrateError::Execute(source) => StoreError::opening(&shown, source),
            source => StoreError::Migrate { path: shown.clone(), source },
        })?;
        let store = Store { pool, lock: std::sync::Arc::new(lock), indexing: Default::default(), meanings: Default::default() };
        let interrupted = store.mark_interrupted().await.map_err(|e| StoreError::opening(&shown, e))?;
        if interrupted > 0 {
            tracing::warn!(interrupted, "replies left streaming by a crash were marked interrupted");
        }
        match store.forget_unused_attachments(crate::attachments::UNSENT_KEPT).await {
            Ok(0) => {}
            Ok(forgotten) => tracing::info!(forgotten, "attached files no message carries were removed"),
            // Only space is lost.
            Err(e) => tracing::warn!(error = %e, "could not remove attached files no message carries"),
        }
        Ok(store)
    }

    async fn mark_interrupted(&self) -> Result<u64, StoreError> {
        let done = sqlx::query("UPDATE messages SET status = 'interrupted' WHERE status = 'streaming'").execute(&self.pool).await?;
        Ok(done.rows_affected())
    }

    pub async fn create_chat(&self) -> Result<ChatSummary, StoreError> {
        let now = now_ms();
        let row: ChatRow =
            sqlx::query_as(&format!("INSERT INTO chats (title, created_at, updated_at) VALUES ('', ?1, ?1) RETURNING {CHAT_COLUMNS}"))
                .bind(now)
                .fetch_one(&self.pool)
                .await?;
        Ok(row.into())
    }

    /// All chats: pinned first, then by last activity.
    pub async fn list_chats(&self) -> Result<Vec<ChatSummary>, StoreError> {
        let rows: Vec<ChatRow> =
            sqlx::query_as(&format!("SELECT {CHAT_COLUMNS} FROM chats ORDER BY pinned DESC, updated_at DESC, id DESC"))
                .fetch_all(&self.pool)
                .await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    pub async fn chat(&self, id: ChatId) -> Result<ChatSummary, StoreError> {
        let row: Option<ChatRow> =
            sqlx::query_as(&format!("SELECT {CHAT_COLUMNS} FROM chats WHERE id = ?")).bind(id).fetch_optional(&self.pool).await?;
        Ok(row.ok_or(StoreError::ChatNotFound(id))?.into())
    }

    /// A title the user typed; automatic titles never replace it.
    pub async fn rename_chat(&self, id: ChatId, title: &str) -> Result<ChatSummary, StoreError> {
        self.update_chat(id, "title = ?2, title_source = 'user'", title.trim().to_owned()).await
    }

    /// An automatic title, kept only while the user has not named the chat.
    pub async fn set_auto_title(&self, id: ChatId, title: &str) -> Result<ChatSummary, StoreError> {
        self.update_chat(id, "title = CASE WHEN title_source = 'auto' THEN ?2 ELSE title END", title.trim().to_owned()).await
    }

    /// The first exchange (user message, reply) of a chat whose title is still the automatic
    /// first line of that message: the model may title it. `None` once the model or the user has.
    pub async fn first_exchange_to_title(&self, id: ChatId) -> Result<Option<(String, String)>, StoreError> {
        let row: Option<(String, String)> =
            sqlx::query_as("SELECT title, title_source FROM chats WHERE id = ?").bind(id).fetch_optional(&self.pool).await?;
        let (title, source) = row.ok_or(StoreError::ChatNotFound(id))?;
        if source != "auto" {
            return Ok(None);
        }
        let path = self.messages(id).await?;
        Ok(match path.as_slice() {
            [user, reply, ..]
                if user.role == Role::User
                    && reply.role == Role::Assistant
                    && reply.status == MessageStatus::Complete
                    && !reply.content.trim().is_empty()
                    && title == title_from(&user.content) =>
            {
                Some((user.content.clone(), reply.content.clone()))
            }
            _ => None,
        })
    }

    pub async fn set_pinned(&self, id: ChatId, pinned: bool) -> Result<ChatSummary, StoreError> {
        self.update_chat(id, "pinned = ?2", pinned).await
    }

    pub async fn set_system_prompt(&self, id: ChatId, prompt: &str) -> Result<ChatSummary, StoreError> {
        self.update_chat(id, "system_prompt = ?2", prompt.to_owned()).await
    }

    /// Switches the model the chat's next reply comes from; earlier replies keep theirs.
    pub async fn set_chat_target(&self, id: ChatId, target: &ModelTarget) -> Result<ChatSummary, StoreError> {
        self.update_chat(id, "model_target = ?2", crate::rows::target_json(target)).await
    }

    async fn update_chat<T>(&self, id: ChatId, assignments: &str, value: T) -> Result<ChatSummary, StoreError>
    where
        T: Send + for<'q> sqlx::Encode<'q, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite>,
    {
        let sql = format!("UPDATE chats SET {assignments} WHERE id = ?1 RETURNING {CHAT_COLUMNS}");
        let row: Option<ChatRow> = sqlx::query_as(&sql).bind(id).bind(value).fetch_optional(&self.pool).await?;
        Ok(row.ok_or(StoreError::ChatNotFound(id))?.into())
    }

    /// Deletes a chat with all its messages.
    pub async fn delete_chat(&self, id: ChatId) -> Result<(), StoreError> {
        let mut tx = self.write_transaction().await?;
        let done = sqlx::query("DELETE FROM chats WHERE id = ?").bind(id).execute(&mut *tx).await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::ChatNotFound(id));
        }
        // SQLite may give a later chat this id again; it must not inherit these settings.
        sqlx::query("DELETE FROM settings WHERE key = ?").bind(SettingsScope::Chat { id }.key()).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn message(&self, id: MessageId) -> Result<StoredMessage, StoreError> {
        let row: Option<MessageRow> = sqlx::query_as(&format!("SELECT {MESSAGE_COLUMNS} FROM messages AS m WHERE m.id = ?"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.ok_or(StoreError::MessageNotFound(id))?.try_into()
    }

    /// The messages from the chat's first one down to `id`, oldest first.
    pub async fn path_to(&self, id: MessageId) -> Result<Vec<StoredMessage>, StoreError> {
        let rows: Vec<MessageRow> = sqlx::query_as(&format!(
            "WITH RECURSIVE path (id) AS (
                 SELECT ?1
                 UNION ALL
                 SELECT p.parent_id FROM messages AS p JOIN path ON p.id = path.id WHERE p.parent_id IS NOT NULL
             )
             SELECT {MESSAGE_COLUMNS} FROM messages AS m WHERE m.id IN path ORDER BY m.id"
        ))
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(TryInto::try_into).collect()
    }

    /// Shows the branch through `id` (a sibling the user picked): the chat's path now runs
    /// through it down to its newest leaf. Returns the new path.
    pub async fn switch_branch(&self, chat: ChatId, id: MessageId) -> Result<Vec<StoredMessage>, StoreError> {
        let message = self.message(id).await?;
        if message.chat_id != chat {
            return Err(StoreError::MessageNotFound(id));
        }
        let leaf = newest_leaf(&self.pool, id).await?;
        sqlx::query("UPDATE chats SET current_leaf_id = ? WHERE id = ?").bind(leaf).bind(chat).execute(&self.pool).await?;
        self.path_to(leaf).await
    }

    /// Deletes a message and everything after it in its branch. When that was on the path on
    /// show, the path moves to the newest remaining sibling's branch, else ends at the parent.
    pub async fn delete_message(&self, chat: ChatId, id: MessageId) -> Result<Vec<StoredMessage>, StoreError> {
        let message = self.message(id).await?;
        if message.chat_id != chat {
            return Err(StoreError::MessageNotFound(id));
        }
        let mut tx = self.write_transaction().await?;
        let on_path: bool = sqlx::query_scalar(
            "WITH RECURSIVE path (id) AS (
                 SELECT current_leaf_id FROM chats WHERE id = ?1
                 UNION ALL
                 SELECT p.parent_id FROM messages AS p JOIN path ON p.id = path.id WHERE p.parent_id IS NOT NULL
             )
             SELECT EXISTS (SELECT 1 FROM path WHERE id = ?2)",
        )
        .bind(chat)
        .bind(id)
        .fetch_one(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM messages WHERE id = ?").bind(id).execute(&mut *tx).await?;
        if on_path {
            let sibling = message.siblings.iter().rev().copied().find(|&s| s != id);
            let leaf = match sibling {
                Some(sibling) => Some(newest_leaf(&mut *tx, sibling).await?),
                None => message.parent_id,
            };
            sqlx::query("UPDATE chats SET current_leaf_id = ? WHERE id = ?").bind(leaf).bind(chat).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        self.messages(chat).await
    }

    /// A transaction that writes. It takes the write lock at its start: a transaction that
    /// read first could not become a writer once another connection had written (SQLite's
    /// BUSY_SNAPSHOT, "database is locked", which no busy timeout waits out); this one waits for
    /// the other writer instead.
    pub(crate) async fn write_transaction(&self) -> Result<Transaction<'static, Sqlite>, sqlx::Error> {
        self.pool.begin_with("BEGIN IMMEDIATE").await
    }

    pub(crate) fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// SQLite's journal mode, e.g. "wal".
    pub async fn journal_mode(&self) -> Result<String, StoreError> {
        Ok(sqlx::query_scalar("PRAGMA journal_mode").fetch_one(&self.pool).await?)
    }

    /// Closes every connection, checkpointing the WAL, and lets go of the history.
    pub async fn close(&self) {
        self.pool.close().await;
        let _ = self.lock.unlock();
    }
}

impl HistoryStore for Store {
    type Error = StoreError;

    /// The path on show: from the chat's first message to its current leaf.
    async fn messages(&self, chat: ChatId) -> Result<Vec<StoredMessage>, StoreError> {
        let leaf: Option<Option<i64>> =
            sqlx::query_scalar("SELECT current_leaf_id FROM chats WHERE id = ?").bind(chat).fetch_optional(&self.pool).await?;
        match leaf.ok_or(StoreError::ChatNotFound(chat))? {
            Some(leaf) => self.path_to(leaf).await,
            None => Ok(Vec::new()),
        }
    }

    async fn message(&self, id: MessageId) -> Result<StoredMessage, StoreError> {
        Store::message(self, id).await
    }

    async fn path_to(&self, id: MessageId) -> Result<Vec<StoredMessage>, StoreError> {
        Store::path_to(self, id).await
    }

    async fn system_prompt(&self, chat: ChatId) -> Result<String, StoreError> {
        Ok(self.chat(chat).await?.system_prompt)
    }

    async fn chat_target(&self, chat: ChatId) -> Result<ModelTarget, StoreError> {
        Ok(self.chat(chat).await?.model)
    }

    /// Adds a message after `parent` (`None`: as the chat's first) and shows its branch; the
    /// first user message also titles an untitled chat.
    async fn append_message(
        &self,
        chat: ChatId,
        parent: Option<MessageId>,
        role: Role,
        content: &str,
        status: MessageStatus,
        model: Option<&str>,
    ) -> Result<StoredMessage, StoreError> {
        self.insert_message(chat, parent, role, content, status, model, Extra::None).await
    }

    async fn append_question(
        &self,
        chat: ChatId,
        parent: Option<MessageId>,
        content: &str,
        attachments: &[Attachment],
        passages: &[Passage],
    ) -> Result<StoredMessage, StoreError> {
        self.insert_message(chat, parent, Role::User, content, MessageStatus::Complete, None, Extra::Question(attachments, passages)).await
    }

    async fn passages(
        &self,
        hashes: &[&str],
        query: &str,
        meaning: Option<&Meaning>,
        limit: usize,
        fill: bool,
    ) -> Result<Vec<Passage>, StoreError> {
        self.retrieve_passages(hashes, query, meaning, limit, fill).await
    }

    async fn passages_without_meaning(&self, hashes: &[&str], model: &str, limit: usize) -> Result<(Vec<Passage>, u64), StoreError> {
        Store::passages_without_meaning(self, hashes, model, limit).await
    }

    async fn keep_meanings(&self, model: &str, meanings: &[PassageMeaning]) -> Result<(), StoreError> {
        Store::keep_meanings(self, model, meanings).await
    }

    async fn document_texts(&self, hashes: &[&str]) -> Result<DocumentTexts, StoreError> {
        let mut texts = DocumentTexts::new();
        for hash in hashes {
            if texts.contains_key(*hash) {
                continue;
            }
            let text: Option<String> = sqlx::query_scalar("SELECT text FROM attachments WHERE hash = ? AND kind = 'document'")
                .bind(hash)
                .fetch_optional(&self.pool)
                .await?;
            texts.extend(text.map(|text| (hash.to_string(), text)));
        }
        Ok(texts)
    }

    async fn images(&self, hashes: &[&str]) -> Result<Vec<ImageInput>, StoreError> {
        let mut images: Vec<ImageInput> = Vec::new();
        for hash in hashes {
            if images.iter().any(|i| i.hash == *hash) {
                continue;
            }
            let data: Option<Vec<u8>> = sqlx::query_scalar("SELECT data FROM attachments WHERE hash = ? AND kind = 'image'")
                .bind(hash)
                .fetch_optional(&self.pool)
                .await?;
            images.extend(data.map(|bytes| ImageInput { hash: hash.to_string(), bytes }));
        }
        Ok(images)
    }

    /// Adds a tool's result after `parent`, with its call's record.
    async fn append_tool_result(&self, chat: ChatId, parent: MessageId, content: &str, run: &ToolRun) -> Result<StoredMessage, StoreError> {
        self.insert_message(chat, Some(parent), Role::Tool, content, MessageStatus::Complete, None, Extra::Tool(run)).await
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
        let done = sqlx::query("UPDATE messages SET content = ?, status = ?, stats = COALESCE(?, stats), updated_at = ? WHERE id = ?")
            .bind(content)
            .bind(status.as_str())
            .bind(stats)
            .bind(now_ms())
            .bind(id)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::MessageNotFound(id));
        }
        self.message(id).await
    }

    async fn save_token_probs(&self, id: MessageId, tokens: &[TokenProbs]) -> Result<(), StoreError> {
        let json = serde_json::to_string(tokens).expect("token probabilities serialize");
        sqlx::query(
            "INSERT INTO token_probs (message_id, tokens) VALUES (?, ?) ON CONFLICT (message_id) DO UPDATE SET tokens = excluded.tokens",
        )
        .bind(id)
        .bind(json)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn token_probs(&self, id: MessageId) -> Result<Vec<TokenProbs>, StoreError> {
        let json: Option<String> =
            sqlx::query_scalar("SELECT tokens FROM token_probs WHERE message_id = ?").bind(id).fetch_optional(&self.pool).await?;
        // Unreadable data (written by a later version) is as good as none: the inspector says so.
        Ok(json.and_then(|j| serde_json::from_str(&j).ok()).unwrap_or_default())
    }
}

/// The newest leaf under `id`: follow the newest child down.
async fn newest_leaf<'e, E: sqlx::SqliteExecutor<'e>>(executor: E, id: MessageId) -> Result<MessageId, StoreError> {
    Ok(sqlx::query_scalar(
        "WITH RECURSIVE down (id) AS (
             SELECT ?1
             UNION ALL
             SELECT (SELECT MAX(c.id) FROM messages AS c WHERE c.parent_id = down.id) FROM down WHERE down.id IS NOT NULL
         )
         SELECT MAX(id) FROM down",
    )
    .bind(id)
    .fetch_one(executor)
    .await?)
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

pub(crate) fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// How long an opener waits for the lock: a Hearth that is quitting lets go within this.
const LOCK_WAIT: Duration = Duration::from_secs(3);

/// Takes the history's lock file (`<file>.lock` beside it), which the system frees when the
/// holder exits, however it exits.
async fn lock_history(path: &Path, shown: &str) -> Result<std::fs::File, StoreError> {
    let mut lock_path = path.as_os_str().to_owned();
    lock_path.push(".lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|source| StoreError::Unreadable { path: shown.to_owned(), source })?;
    let deadline = tokio::time::Instant::now() + LOCK_WAIT;
    loop {
        match lock.try_lock() {
            Ok(()) => return Ok(lock),
            Err(std::fs::TryLockError::WouldBlock) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(std::fs::TryLockError::WouldBlock) => return Err(StoreError::InUse { path: shown.to_owned() }),
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(StoreError::Unreadable { path: shown.to_owned(), source });
            }
        }
    }
}

/// What a message carries besides its text: a tool result's record, or a question's files.
enum Extra<'a> {
    None,
    Tool(&'a ToolRun),
    Question(&'a [Attachment], &'a [Passage]),
}

impl Store {
    /// Adds a message; a tool's result is kept as the user's turn (what the model reads it as)
    /// with its record beside it.
    #[allow(clippy::too_many_arguments)]
    async fn insert_message(
        &self,
        chat: ChatId,
        parent: Option<MessageId>,
        role: Role,
        content: &str,
        status: MessageStatus,
        model: Option<&str>,
        extra: Extra<'_>,
    ) -> Result<StoredMessage, StoreError> {
        let json_unless_empty = |list: String, empty: bool| (!empty).then_some(list);
        let (tool, attachments, passages) = match extra {
            Extra::None => (None, None, None),
            Extra::Tool(run) => (Some(serde_json::to_string(run).expect("tool record serializes")), None, None),
            Extra::Question(files, passages) => (
                None,
                json_unless_empty(serde_json::to_string(files).expect("attachments serialize"), files.is_empty()),
                json_unless_empty(serde_json::to_string(passages).expect("passages serialize"), passages.is_empty()),
            ),
        };
        let now = now_ms();
        let mut tx = self.write_transaction().await?;
        if let Some(parent) = parent {
            let parent_chat: Option<i64> =
                sqlx::query_scalar("SELECT chat_id FROM messages WHERE id = ?").bind(parent).fetch_optional(&mut *tx).await?;
            if parent_chat != Some(chat) {
                return Err(StoreError::MessageNotFound(parent));
            }
        }
        let id: Option<i64> = sqlx::query_scalar(
            "INSERT INTO messages (chat_id, parent_id, role, content, status, model, tool, attachments, passages, created_at, updated_at)
             SELECT id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM chats WHERE id = ? RETURNING id",
        )
        .bind(parent)
        .bind(if role == Role::Tool { Role::User.as_str() } else { role.as_str() })
        .bind(content)
        .bind(status.as_str())
        .bind(model)
        .bind(tool)
        .bind(attachments)
        .bind(passages)
        .bind(now)
        .bind(now)
        .bind(chat)
        .fetch_optional(&mut *tx)
        .await?;
        let id = id.ok_or(StoreError::ChatNotFound(chat))?;
        sqlx::query(
            "UPDATE chats SET updated_at = ?2, current_leaf_id = ?3,
                 title = CASE WHEN title = '' AND title_source = 'auto' AND ?4 != '' THEN ?4 ELSE title END
             WHERE id = ?1",
        )
        .bind(chat)
        .bind(now)
        .bind(id)
        .bind(if role == Role::User { title_from(content) } else { String::new() })
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        self.message(id).await
    }
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
