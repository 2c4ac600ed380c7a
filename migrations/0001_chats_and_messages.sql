-- Chats and their messages. Times are Unix milliseconds.
CREATE TABLE chats (
    id         INTEGER PRIMARY KEY,
    title      TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX chats_by_activity ON chats (updated_at DESC);

CREATE TABLE messages (
    id         INTEGER PRIMARY KEY,
    chat_id    INTEGER NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    role       TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
    content    TEXT    NOT NULL,
    status     TEXT    NOT NULL CHECK (status IN ('streaming', 'complete', 'stopped', 'interrupted', 'failed')),
    -- The model that wrote an assistant reply.
    model      TEXT,
    -- ReplyStats as JSON, for finished assistant replies.
    stats      TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX messages_by_chat ON messages (chat_id, id);

-- Small app-wide settings, e.g. the selected model.
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
