//! The store on real SQLite files.

use hearth_core::{HistoryStore, MessageStatus, ReplyStats, Role};
use hearth_store::{Store, StoreError};

async fn open(dir: &tempfile::TempDir) -> Store {
    Store::open(&dir.path().join("hearth.db")).await.expect("store opens")
}

#[tokio::test]
async fn migrations_run_on_a_real_file_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    assert_eq!(store.journal_mode().await.unwrap(), "wal");
    assert!(dir.path().join("hearth.db").exists());
    store.close().await;
    // Reopening an up-to-date file runs nothing and keeps working.
    let store = open(&dir).await;
    assert!(store.list_chats().await.unwrap().is_empty());
}

#[tokio::test]
async fn chats_are_titled_and_listed_by_activity() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    let first = store.create_chat().await.unwrap();
    let second = store.create_chat().await.unwrap();
    assert_eq!(first.title, "");
    tokio::time::sleep(std::time::Duration::from_millis(3)).await; // Activity times are in ms.
    let plan = store.append_message(first.id, None, Role::User, "Plan a trip\nto Lyon", MessageStatus::Complete, None).await.unwrap();
    store.append_message(first.id, Some(plan.id), Role::User, "Another question", MessageStatus::Complete, None).await.unwrap();
    let chats = store.list_chats().await.unwrap();
    assert_eq!(chats.iter().map(|c| c.id).collect::<Vec<_>>(), [first.id, second.id]);
    assert_eq!(chats[0].title, "Plan a trip");
    let messages = store.messages(first.id).await.unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].content, "Plan a trip\nto Lyon");
}

#[tokio::test]
async fn missing_chats_and_messages_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    assert!(matches!(store.messages(99).await, Err(StoreError::ChatNotFound(99))));
    assert!(matches!(
        store.append_message(99, None, Role::User, "x", MessageStatus::Complete, None).await,
        Err(StoreError::ChatNotFound(99))
    ));
    assert!(matches!(store.update_reply(7, "x", MessageStatus::Complete, None).await, Err(StoreError::MessageNotFound(7))));
}

#[tokio::test]
async fn a_reply_cut_off_mid_stream_is_found_partial_and_interrupted_after_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    let chat = store.create_chat().await.unwrap();
    let user = store.append_message(chat.id, None, Role::User, "Tell me a story", MessageStatus::Complete, None).await.unwrap();
    let reply = store.append_message(chat.id, Some(user.id), Role::Assistant, "", MessageStatus::Streaming, Some("SmolLM2")).await.unwrap();
    store.update_reply(reply.id, "Once upon a", MessageStatus::Streaming, None).await.unwrap();
    // The app dies here: the reply is never finished.
    drop(store);

    let store = open(&dir).await;
    let messages = store.messages(chat.id).await.unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0], user);
    assert_eq!(messages[1].content, "Once upon a");
    assert_eq!(messages[1].status, MessageStatus::Interrupted);
    assert_eq!(messages[1].model.as_deref(), Some("SmolLM2"));

    let stats = ReplyStats { prompt_tokens: 10, completion_tokens: 3, ..ReplyStats::default() };
    let done = store.update_reply(reply.id, "Once upon a time", MessageStatus::Complete, Some(&stats)).await.unwrap();
    assert_eq!(done.stats, Some(stats));
}

#[tokio::test]
async fn a_database_from_a_newer_hearth_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    store.close().await;
    let path = dir.path().join("hearth.db");
    {
        use sqlx::Connection;
        let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite:{}", path.display())).await.unwrap();
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) VALUES (9999, 'future', 1, x'00', 0)",
        )
        .execute(&mut conn)
        .await
        .unwrap();
        conn.close().await.unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    match Store::open(&path).await {
        Err(e @ StoreError::NewerSchema { version: 9999, .. }) => assert!(e.to_string().contains("newer Hearth")),
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("a newer schema must be refused"),
    }
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[tokio::test]
async fn settings_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    assert_eq!(store.setting("active_model").await.unwrap(), None);
    store.set_setting("active_model", "/a.gguf").await.unwrap();
    store.set_setting("active_model", "/b.gguf").await.unwrap();
    assert_eq!(store.setting("active_model").await.unwrap().as_deref(), Some("/b.gguf"));
}

#[tokio::test]
async fn the_model_titles_a_chat_once_and_never_over_the_users_title() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    let chat = store.create_chat().await.unwrap().id;
    assert_eq!(store.first_exchange_to_title(chat).await.unwrap(), None, "no exchange yet");
    let user =
        store.append_message(chat, None, Role::User, "How do tides work?\nDetails please", MessageStatus::Complete, None).await.unwrap();
    let reply = store.append_message(chat, Some(user.id), Role::Assistant, "", MessageStatus::Streaming, None).await.unwrap();
    assert_eq!(store.first_exchange_to_title(chat).await.unwrap(), None, "the reply is still streaming");
    store.update_reply(reply.id, "The moon pulls the sea.", MessageStatus::Complete, None).await.unwrap();
    let exchange = Some(("How do tides work?\nDetails please".to_owned(), "The moon pulls the sea.".to_owned()));
    assert_eq!(store.first_exchange_to_title(chat).await.unwrap(), exchange);

    assert_eq!(store.set_auto_title(chat, "Tides Explained").await.unwrap().title, "Tides Explained");
    assert_eq!(store.first_exchange_to_title(chat).await.unwrap(), None, "titled by the model already");

    let other = store.create_chat().await.unwrap().id;
    let user = store.append_message(other, None, Role::User, "Hi", MessageStatus::Complete, None).await.unwrap();
    store.append_message(other, Some(user.id), Role::Assistant, "Hello", MessageStatus::Complete, None).await.unwrap();
    store.rename_chat(other, "Mine").await.unwrap();
    assert_eq!(store.first_exchange_to_title(other).await.unwrap(), None, "the user named it");
    assert_eq!(store.set_auto_title(other, "Greetings").await.unwrap().title, "Mine");
}

#[tokio::test]
async fn a_deleted_chats_settings_go_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    let chat = store.create_chat().await.unwrap().id;
    let key = hearth_core::SettingsScope::Chat { id: chat }.key();
    store.set_setting(&key, "{}").await.unwrap();
    store.delete_chat(chat).await.unwrap();
    assert_eq!(store.setting(&key).await.unwrap(), None);
    // SQLite hands the freed id out again: the new chat starts with no settings of its own.
    assert_eq!(store.create_chat().await.unwrap().id, chat);
}

/// One Hearth per history: a second opener (another app, `hearth-cli --db`) is refused in words
/// before it touches the file (it would mark the first one's live replies interrupted).
#[tokio::test]
async fn a_history_in_use_is_refused_until_its_holder_lets_go() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hearth.db");
    let first = Store::open(&path).await.unwrap();
    let chat = first.create_chat().await.unwrap();
    first.append_message(chat.id, None, Role::Assistant, "half a reply", MessageStatus::Streaming, None).await.unwrap();
    match Store::open(&path).await {
        Err(e @ StoreError::InUse { .. }) => assert!(e.to_string().contains("is open in another Hearth"), "{e}"),
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("a history in use must be refused"),
    }
    // Still streaming: the refused opener did not mark it interrupted.
    assert_eq!(first.messages(chat.id).await.unwrap()[0].status, MessageStatus::Streaming);
    let clone = first.clone();
    drop(first);
    assert!(matches!(Store::open(&path).await, Err(StoreError::InUse { .. })), "a clone still holds it");
    drop(clone);
    let reopened = Store::open(&path).await.unwrap();
    assert_eq!(reopened.messages(chat.id).await.unwrap()[0].status, MessageStatus::Interrupted);
}

/// A message appended while another connection writes the same chat (the app titles a chat
/// while the next turn saves its question): each write waits its turn instead of failing with
/// "database is locked" (a transaction that read first could not become a writer once the other
/// had written: SQLite's BUSY_SNAPSHOT, which no busy timeout waits out).
#[tokio::test]
async fn writers_at_once_wait_for_each_other_instead_of_failing() {
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(open(&dir).await);
    let chat = store.create_chat().await.unwrap().id;
    let first = store.append_message(chat, None, Role::User, "first", MessageStatus::Complete, None).await.unwrap();
    let mut writers = tokio::task::JoinSet::new();
    for i in 0..40 {
        let store = store.clone();
        writers.spawn(async move {
            if i % 2 == 0 {
                store
                    .append_message(chat, Some(first.id), Role::User, &format!("question {i}"), MessageStatus::Complete, None)
                    .await
                    .map(drop)
            } else {
                store.set_auto_title(chat, &format!("title {i}")).await.map(drop)
            }
        });
    }
    while let Some(done) = writers.join_next().await {
        done.unwrap().expect("every write lands");
    }
    let path = store.messages(chat).await.unwrap();
    assert_eq!(path[0].content, "first");
    assert_eq!(path[1].siblings.len(), 20, "every question was appended");
    let chats = store.list_chats().await.unwrap();
    assert_eq!(chats.len(), 1);
    assert!(chats[0].title.starts_with("title "), "{}", chats[0].title);
}
