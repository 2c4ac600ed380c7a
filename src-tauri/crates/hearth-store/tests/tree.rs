//! Branches: edits and regenerations are siblings, the chat shows one path, deletes take subtrees.

use hearth_core::{ChatId, HistoryStore, MessageId, MessageStatus, Role, StoredMessage};
use hearth_store::{Store, StoreError};

async fn add(store: &Store, chat: ChatId, parent: Option<MessageId>, role: Role, text: &str) -> StoredMessage {
    store.append_message(chat, parent, role, text, MessageStatus::Complete, None).await.unwrap()
}

async fn path(store: &Store, chat: ChatId) -> Vec<String> {
    store.messages(chat).await.unwrap().into_iter().map(|m| m.content).collect()
}

#[tokio::test]
async fn edits_and_regenerations_branch_and_the_chat_shows_one_path() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("hearth.db")).await.unwrap();
    let chat = store.create_chat().await.unwrap().id;
    let q1 = add(&store, chat, None, Role::User, "Q1").await;
    let a1 = add(&store, chat, Some(q1.id), Role::Assistant, "A1").await;
    let q2 = add(&store, chat, Some(a1.id), Role::User, "Q2").await;
    let a2 = add(&store, chat, Some(q2.id), Role::Assistant, "A2").await;
    assert_eq!(path(&store, chat).await, ["Q1", "A1", "Q2", "A2"]);

    // Regenerate A2: a sibling, shown; both listed as siblings of each other.
    let a2b = add(&store, chat, Some(q2.id), Role::Assistant, "A2b").await;
    assert_eq!(path(&store, chat).await, ["Q1", "A1", "Q2", "A2b"]);
    assert_eq!(a2b.siblings, [a2.id, a2b.id]);
    // Edit Q2: a sibling of Q2 with its own reply.
    let q2b = add(&store, chat, Some(a1.id), Role::User, "Q2 edited").await;
    add(&store, chat, Some(q2b.id), Role::Assistant, "A2 for edit").await;
    let shown = store.messages(chat).await.unwrap();
    assert_eq!(shown.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), ["Q1", "A1", "Q2 edited", "A2 for edit"]);
    assert_eq!(shown[2].siblings, [q2.id, q2b.id]);
    assert_eq!(shown[0].siblings, [q1.id]);

    // Switching to the first Q2 shows its newest reply (the regenerated one).
    let switched = store.switch_branch(chat, q2.id).await.unwrap();
    assert_eq!(switched.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), ["Q1", "A1", "Q2", "A2b"]);
    assert_eq!(path(&store, chat).await, ["Q1", "A1", "Q2", "A2b"]);

    // Deleting the shown reply moves to its sibling; deleting Q2 takes its subtree and moves
    // to the edited branch.
    assert_eq!(store.delete_message(chat, a2b.id).await.unwrap().last().map(|m| m.content.clone()), Some("A2".into()));
    let after = store.delete_message(chat, q2.id).await.unwrap();
    assert_eq!(after.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), ["Q1", "A1", "Q2 edited", "A2 for edit"]);
    assert!(matches!(store.message(a2.id).await, Err(StoreError::MessageNotFound(_))));
    assert_eq!(after[2].siblings, [q2b.id]);

    // A parent from another chat is refused; deleting the first message empties the chat.
    let other = store.create_chat().await.unwrap().id;
    let refused = store.append_message(other, Some(q1.id), Role::User, "x", MessageStatus::Complete, None).await;
    assert!(matches!(refused, Err(StoreError::MessageNotFound(_))));
    assert!(store.delete_message(chat, q1.id).await.unwrap().is_empty());
    assert!(store.messages(chat).await.unwrap().is_empty());
}

#[tokio::test]
async fn chats_are_renamed_pinned_prompted_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("hearth.db")).await.unwrap();
    let a = store.create_chat().await.unwrap().id;
    let b = store.create_chat().await.unwrap().id;
    add(&store, a, None, Role::User, "First question").await;
    let ids = |chats: Vec<hearth_core::ChatSummary>| chats.into_iter().map(|c| c.id).collect::<Vec<_>>();
    store.set_pinned(b, true).await.unwrap();
    assert_eq!(ids(store.list_chats().await.unwrap()), [b, a]);

    // An automatic title gives way to the user's, never the other way round.
    assert_eq!(store.set_auto_title(a, "Trip planning").await.unwrap().title, "Trip planning");
    assert_eq!(store.rename_chat(a, "  My trip ").await.unwrap().title, "My trip");
    assert_eq!(store.set_auto_title(a, "Something else").await.unwrap().title, "My trip");
    assert_eq!(store.set_system_prompt(a, "Be brief.").await.unwrap().system_prompt, "Be brief.");

    store.delete_chat(a).await.unwrap();
    assert_eq!(ids(store.list_chats().await.unwrap()), [b]);
    assert!(matches!(store.delete_chat(a).await, Err(StoreError::ChatNotFound(_))));
    assert!(matches!(store.rename_chat(a, "x").await, Err(StoreError::ChatNotFound(_))));
}
