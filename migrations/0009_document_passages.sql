-- Attached documents cut into passages (hearth_core::passage_ranges) for retrieval when a
-- document does not fit the model's context whole: BM25 over FTS5, as the chats' search.
-- `document` is its document's hash, indexed so that a query is restricted to a chat's documents
-- by the index itself (ranked with weight 0); `ordinal` is the passage's place in its document.
-- A document is cut once (`indexed`); one stored before this version, or imported, is cut when
-- first retrieved from.
CREATE VIRTUAL TABLE passages USING fts5 (
    text,
    document,
    ordinal UNINDEXED,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

ALTER TABLE attachments ADD COLUMN indexed INTEGER NOT NULL DEFAULT 0;

-- The passages a user message was given in place of its documents, as JSON
-- (hearth_core::Passage: hash, name, ordinal, text); NULL for none.
ALTER TABLE messages ADD COLUMN passages TEXT;
