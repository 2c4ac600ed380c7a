-- Full-text search over message text. External content: the text lives once, in `messages`.
-- A reply is indexed once it stops streaming, so the flushes of a streaming reply cost nothing here.
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content,
    content = 'messages',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO messages_fts (rowid, content) SELECT id, content FROM messages WHERE status != 'streaming';

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages WHEN new.status != 'streaming' BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages WHEN old.status != 'streaming' BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, status ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content)
        SELECT 'delete', old.id, old.content WHERE old.status != 'streaming';
    INSERT INTO messages_fts (rowid, content) SELECT new.id, new.content WHERE new.status != 'streaming';
END;
