//! Every earlier schema upgrades to the current one with its data intact: a database is built at
//! each past version (only the migrations up to it), filled the way that version wrote rows, then
//! opened by today's store.

use std::borrow::Cow;
use std::path::Path;

use sqlx::Connection;
use sqlx::migrate::Migrator;

use hearth_core::{HistoryStore, MessageStatus, Role};
use hearth_store::Store;

/// Rows as each schema version wrote them: a three-message chat whose last reply was streaming
/// when the app died.
/// Rows as versions 2 and up write them (parent links, current leaf, title source).
const TREE: &str = "INSERT INTO chats (id, title, created_at, updated_at, current_leaf_id, title_source) VALUES (1, 'Lighthouse', 1, 3, NULL, 'user');
         INSERT INTO messages (id, chat_id, parent_id, role, content, status, model, stats, created_at, updated_at) VALUES
           (1, 1, NULL, 'user', 'Tell me about the lighthouse keeper', 'complete', NULL, NULL, 1, 1),
           (2, 1, 1, 'assistant', 'He lived alone on the rock.', 'complete', 'SmolLM2', '{\"promptTokens\":9,\"cachedTokens\":0,\"completionTokens\":7,\"ttftMs\":12.5,\"decodeTps\":90.0}', 2, 2),
           (3, 1, 2, 'user', 'And his cat?', 'complete', NULL, NULL, 3, 3),
           (4, 1, 3, 'assistant', 'The cat watched the gulls', 'streaming', 'SmolLM2', NULL, 4, 4);
         UPDATE chats SET current_leaf_id = 4 WHERE id = 1;";

const SEEDS: &[(i64, &str)] = &[
    (
        1,
        "INSERT INTO chats (id, title, created_at, updated_at) VALUES (1, 'Lighthouse', 1, 3);
         INSERT INTO messages (id, chat_id, role, content, status, model, stats, created_at, updated_at) VALUES
           (1, 1, 'user', 'Tell me about the lighthouse keeper', 'complete', NULL, NULL, 1, 1),
           (2, 1, 'assistant', 'He lived alone on the rock.', 'complete', 'SmolLM2', '{\"promptTokens\":9,\"cachedTokens\":0,\"completionTokens\":7,\"ttftMs\":12.5,\"decodeTps\":90.0}', 2, 2),
           (3, 1, 'user', 'And his cat?', 'complete', NULL, NULL, 3, 3),
           (4, 1, 'assistant', 'The cat watched the gulls', 'streaming', 'SmolLM2', NULL, 4, 4);",
    ),
    (2, TREE),
    // 0004 added an index only: the data is as at 3.
    (3, TREE),
    (4, TREE),
    // 0005 added the chat's model target (NULL: the local model) and nothing else.
    (5, TREE),
    // 0006 added token probabilities in a table of their own; old rows have none.
    (6, TREE),
    // 0007 added a tool message's record (NULL for every other message).
    (7, TREE),
    // 0008 added attached files; a document stored then was never cut into passages.
    (8, ATTACHED),
    // 0009 added passages (an FTS5 table, a column each on attachments and messages), empty here.
    (9, ATTACHED),
    // 0010 added images (a kind of attachment, nothing else); 0011 passages' vectors, none here.
    (10, ATTACHED),
];

/// Version 8's rows: the tree, its first question carrying a document.
const ATTACHED: &str = concat!(
    "INSERT INTO attachments (hash, kind, data, text, created_at) VALUES
       ('abababababababababababababababababababababababababababababababab', 'document', x'4b', 'The keeper kept a ginger cat.', 1);",
    "INSERT INTO chats (id, title, created_at, updated_at, current_leaf_id, title_source) VALUES (1, 'Lighthouse', 1, 3, NULL, 'user');
     INSERT INTO messages (id, chat_id, parent_id, role, content, status, model, stats, created_at, updated_at, attachments) VALUES
       (1, 1, NULL, 'user', 'Tell me about the lighthouse keeper', 'complete', NULL, NULL, 1, 1,
        '[{\"hash\":\"abababababababababababababababababababababababababababababababab\",\"name\":\"keeper.md\",\"kind\":\"document\",\"bytes\":1,\"chars\":29}]'),
       (2, 1, 1, 'assistant', 'He lived alone on the rock.', 'complete', 'SmolLM2', '{\"promptTokens\":9,\"cachedTokens\":0,\"completionTokens\":7,\"ttftMs\":12.5,\"decodeTps\":90.0}', 2, 2, NULL),
       (3, 1, 2, 'user', 'And his cat?', 'complete', NULL, NULL, 3, 3, NULL),
       (4, 1, 3, 'assistant', 'The cat watched the gulls', 'streaming', 'SmolLM2', NULL, 4, 4, NULL);
     UPDATE chats SET current_leaf_id = 4 WHERE id = 1;"
);

async fn database_at_version(path: &Path, version: i64) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../migrations");
    let mut migrator = Migrator::new(dir.as_path()).await.unwrap();
    let upto: Vec<_> = migrator.migrations.iter().filter(|m| m.version <= version).cloned().collect();
    migrator.migrations = Cow::Owned(upto);
    let url = format!("sqlite:{}?mode=rwc", path.display());
    let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
    migrator.run(&mut conn).await.unwrap();
    let seed = SEEDS.iter().find(|(v, _)| *v == version).expect("a seed for every past version").1;
    sqlx::raw_sql(seed).execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();
}

#[tokio::test]
async fn every_earlier_schema_upgrades_with_its_data() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../migrations");
    let latest = Migrator::new(dir.as_path()).await.unwrap().migrations.iter().map(|m| m.version).max().unwrap();
    let past: Vec<i64> = (1..latest).collect();
    assert_eq!(past, SEEDS.iter().map(|(v, _)| *v).collect::<Vec<_>>(), "add a seed for each new migration");

    for &version in &past {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("hearth.db");
        database_at_version(&path, version).await;
        let store = Store::open(&path).await.unwrap_or_else(|e| panic!("from version {version}: {e}"));

        let path_shown = store.messages(1).await.unwrap();
        let texts: Vec<&str> = path_shown.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(texts.len(), 4, "from version {version}: {texts:?}");
        let parents: Vec<Option<i64>> = path_shown.iter().map(|m| m.parent_id).collect();
        assert_eq!(parents, [None, Some(1), Some(2), Some(3)], "from version {version}");
        assert_eq!(path_shown[3].status, MessageStatus::Interrupted, "from version {version}");
        assert_eq!(path_shown[1].stats.as_ref().map(|s| s.completion_tokens), Some(7));
        // Messages from before attachments carry none; from before passages, no passages.
        let attached = path_shown.iter().filter(|m| !m.attachments.is_empty()).count();
        assert_eq!(attached, usize::from(version >= 8), "from version {version}");
        assert!(path_shown.iter().all(|m| m.passages.is_empty()), "from version {version}");
        if version >= 8 {
            // A document stored before passages is cut into them when first retrieved from.
            let hash = &path_shown[0].attachments[0].hash;
            let found = store.retrieve_passages(&[hash], "Which cat?", None, 5, true).await.unwrap();
            assert_eq!(found.iter().map(|p| p.text.as_str()).collect::<Vec<_>>(), ["The keeper kept a ginger cat."]);
        }
        // Images are kept beside documents (0010 widened the kinds the table takes).
        let image = hearth_store::StoredContent { kind: hearth_core::AttachmentKind::Image, data: b"BM".to_vec(), text: String::new() };
        store.keep_attachment(&"cd".repeat(32), &image).await.unwrap_or_else(|e| panic!("from version {version}: {e}"));
        assert_eq!(store.attachment(&"cd".repeat(32)).await.unwrap(), Some(image));
        assert_eq!(store.list_chats().await.unwrap()[0].title, "Lighthouse");
        // Chats from before providers answer with the local model.
        assert_eq!(store.chat_target(1).await.unwrap(), hearth_core::ModelTarget::LOADED);

        // Search covers the old rows, including the reply that was interrupted.
        let hits = store.search("gulls", 10).await.unwrap();
        assert_eq!(hits.iter().map(|h| h.message_id).collect::<Vec<_>>(), [4], "from version {version}");
        // Replies from before the inspector have no token probabilities; new ones keep theirs.
        assert!(store.token_probs(2).await.unwrap().is_empty(), "from version {version}");
        let kept = [hearth_core::TokenProbs { id: 7, text: "He".into(), p: 0.5, entropy: 1.0, top: Vec::new() }];
        store.save_token_probs(2, &kept).await.unwrap();
        assert_eq!(store.token_probs(2).await.unwrap(), kept);
        // The upgraded chat keeps growing as a tree.
        let next = store.append_message(1, Some(4), Role::User, "Go on", MessageStatus::Complete, None).await.unwrap();
        assert_eq!(next.parent_id, Some(4));
    }
}
