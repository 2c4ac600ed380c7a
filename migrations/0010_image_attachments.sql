-- Images attached to user messages, for vision models (hearth_core::AttachmentKind::Image): kept
-- as they are (`data`), with no text. SQLite cannot change a CHECK constraint in place, so the
-- table is copied into one that takes both kinds.
CREATE TABLE attachments_new (
    hash       TEXT    PRIMARY KEY,
    kind       TEXT    NOT NULL CHECK (kind IN ('document', 'image')),
    data       BLOB    NOT NULL,
    text       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    indexed    INTEGER NOT NULL DEFAULT 0
);
INSERT INTO attachments_new (hash, kind, data, text, created_at, indexed)
    SELECT hash, kind, data, text, created_at, indexed FROM attachments;
DROP TABLE attachments;
ALTER TABLE attachments_new RENAME TO attachments;
