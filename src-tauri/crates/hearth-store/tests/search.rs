//! Full-text search on a real file: matches are marked, odd input never errors.

use hearth_core::{HistoryStore, MessageStatus, Role};
use hearth_store::Store;

#[tokio::test]
async fn search_finds_marks_and_survives_hostile_queries() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("hearth.db")).await.unwrap();
    let trip = store.create_chat().await.unwrap().id;
    let q = store.append_message(trip, None, Role::User, "What is the capital of France?", MessageStatus::Complete, None).await.unwrap();
    let a = store
        .append_message(trip, Some(q.id), Role::Assistant, "The capital of France is Paris.", MessageStatus::Complete, None)
        .await
        .unwrap();
    let other = store.create_chat().await.unwrap().id;
    store
        .append_message(
            other,
            None,
            Role::User,
            "Crème brûlée recipe, \"quoted\" AND weird: NEAR(x) -y ^z *",
            MessageStatus::Complete,
            None,
        )
        .await
        .unwrap();
    // A streaming reply is not searchable until it finishes.
    let streaming = store.append_message(other, None, Role::Assistant, "", MessageStatus::Streaming, None).await.unwrap();
    store.update_reply(streaming.id, "zeppelin", MessageStatus::Streaming, None).await.unwrap();
    assert!(store.search("zeppelin", 10).await.unwrap().is_empty());
    store.update_reply(streaming.id, "zeppelin over the bay", MessageStatus::Complete, None).await.unwrap();
    assert_eq!(store.search("zeppelin", 10).await.unwrap().len(), 1);

    let hits = store.search("paris", 10).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!((hits[0].chat_id, hits[0].message_id, hits[0].role), (trip, a.id, Role::Assistant));
    assert_eq!(hits[0].chat_title, "What is the capital of France?");
    let marked: Vec<&str> = hits[0].snippet.iter().filter(|p| p.hit).map(|p| p.text.as_str()).collect();
    assert_eq!(marked, ["Paris"]);
    // All words must match; the last one as a prefix; diacritics folded.
    assert_eq!(store.search("capital fra", 10).await.unwrap().len(), 2);
    assert_eq!(store.search("capital zebra", 10).await.unwrap().len(), 0);
    assert_eq!(store.search("creme brulee", 10).await.unwrap().len(), 1);
    assert_eq!(store.search("\"of France is\"", 10).await.unwrap().len(), 1);

    let hostile = [
        "\"",
        "\"\"",
        "'",
        "*",
        "(",
        ")",
        "AND",
        "OR NOT",
        "NEAR(",
        "a:b",
        "-",
        "^",
        "{}",
        "\\",
        "%",
        "_",
        "\u{0}",
        "💥",
        "x\" OR \"y",
        "content:paris",
        "paris*",
        "\"unbalanced",
        "; DROP TABLE messages; --",
    ];
    for query in hostile {
        store.search(query, 10).await.unwrap_or_else(|e| panic!("{query:?}: {e}"));
    }
    assert_eq!(store.search("NEAR(x)", 10).await.unwrap().len(), 1);
    assert_eq!(store.search("\"quoted\"", 10).await.unwrap().len(), 1);
    // Deleting a message removes it from the index.
    store.delete_chat(trip).await.unwrap();
    assert!(store.search("paris", 10).await.unwrap().is_empty());
}
