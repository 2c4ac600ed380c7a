-- Messages form a tree: editing a message or regenerating a reply adds a sibling instead of
-- overwriting, and the chat remembers the leaf of the path on show (what the model sees).
ALTER TABLE messages ADD COLUMN parent_id INTEGER REFERENCES messages (id) ON DELETE CASCADE;
-- Chats so far were linear: each message's parent is the one before it.
UPDATE messages SET parent_id = (
    SELECT MAX(p.id) FROM messages AS p WHERE p.chat_id = messages.chat_id AND p.id < messages.id
);
CREATE INDEX messages_by_parent ON messages (parent_id, id);

ALTER TABLE chats ADD COLUMN current_leaf_id INTEGER REFERENCES messages (id) ON DELETE SET NULL;
UPDATE chats SET current_leaf_id = (SELECT MAX(id) FROM messages WHERE chat_id = chats.id);
ALTER TABLE chats ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
ALTER TABLE chats ADD COLUMN system_prompt TEXT NOT NULL DEFAULT '';
-- 'auto' titles may be replaced by a better automatic one; a title the user typed never is.
ALTER TABLE chats ADD COLUMN title_source TEXT NOT NULL DEFAULT 'auto' CHECK (title_source IN ('auto', 'user'));
DROP INDEX chats_by_activity;
CREATE INDEX chats_by_activity ON chats (pinned DESC, updated_at DESC, id DESC);
