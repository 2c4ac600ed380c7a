-- Files attached to user messages, stored once per content: `hash` is the SHA-256 of the file's
-- bytes (hearth_core::Attachment). `text` is what a model reads of it (a document's text).
-- A content no message refers to is removed at the next start (it was attached, then removed
-- before sending, or its chat was deleted).
CREATE TABLE attachments (
    hash       TEXT    PRIMARY KEY,
    kind       TEXT    NOT NULL CHECK (kind IN ('document')),
    data       BLOB    NOT NULL,
    text       TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);

-- The files a user message carries, in order, as JSON (hearth_core::Attachment: hash, name,
-- kind, bytes, chars); NULL for none.
ALTER TABLE messages ADD COLUMN attachments TEXT;
