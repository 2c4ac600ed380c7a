//! Damaged history files: each is refused with an error that says what happened and what to do,
//! and the file is left byte for byte as it was.

use hearth_core::{HistoryStore, MessageStatus, Role};
use hearth_store::{Store, StoreError};

/// A real history with enough messages to span many pages, checkpointed into the main file.
async fn populated(path: &std::path::Path) -> Vec<u8> {
    let store = Store::open(path).await.unwrap();
    for _ in 0..3 {
        let chat = store.create_chat().await.unwrap();
        let mut parent = None;
        for i in 0..100 {
            let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
            let text = format!("message {i} {}", "lorem ipsum dolor ".repeat(40));
            parent = Some(store.append_message(chat.id, parent, role, &text, MessageStatus::Complete, None).await.unwrap().id);
        }
    }
    store.close().await;
    // Connections closing together may each leave the WAL to the other: fold it in, so the
    // damage below hits the whole database and no stale WAL is replayed over it.
    use sqlx::Connection;
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite:{}", path.display())).await.unwrap();
    let (busy,): (i64,) = sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)").fetch_one(&mut conn).await.unwrap();
    assert_eq!(busy, 0, "the checkpoint could not finish");
    conn.close().await.unwrap();
    std::fs::read(path).unwrap()
}

type Damage = fn(&mut Vec<u8>);

const DAMAGES: &[(&str, Damage)] = &[
    ("not a database", |bytes| *bytes = b"I am a text file that someone renamed to hearth.db\n".repeat(100)),
    ("truncated to half", |bytes| bytes.truncate(bytes.len() / 2)),
    ("truncated inside the header", |bytes| bytes.truncate(60)),
    ("header overwritten", |bytes| bytes[..16].copy_from_slice(b"NOT SQLITE AT AL")),
    ("every page after the first two overwritten", |bytes| bytes[8192..].fill(0xA5)),
];

#[tokio::test]
async fn a_damaged_file_is_refused_in_words_and_left_untouched() {
    for (name, damage) in DAMAGES {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hearth.db");
        let mut bytes = populated(&path).await;
        damage(&mut bytes);
        std::fs::write(&path, &bytes).unwrap();

        let result = Store::open(&path).await;
        let error = match result {
            Ok(_) => panic!("{name}: a damaged file opened"),
            Err(error) => error,
        };
        let message = error.to_string();
        assert!(matches!(error, StoreError::Damaged { path: Some(_), .. }), "{name}: {error:?}");
        assert!(message.contains(&path.display().to_string()), "{name}: {message}");
        assert!(message.contains("restore the file from a backup"), "{name}: {message}");
        let after = std::fs::read(&path).unwrap();
        let first_change = after.iter().zip(&bytes).position(|(a, b)| a != b);
        assert!(
            after.len() == bytes.len() && first_change.is_none(),
            "{name}: {error:?}: the file was changed ({} → {} bytes, first change at {first_change:?})",
            bytes.len(),
            after.len()
        );
    }
}
