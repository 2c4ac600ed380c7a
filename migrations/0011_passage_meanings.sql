-- Passages' vectors by an embedding model, for retrieval by meaning beside BM25 (hearth_core's
-- `meaning`): `model` is the model's identity by content, `vector` its little-endian f32s at
-- unit length. A passage has one per model it was embedded with; they go with their document.
CREATE TABLE passage_meanings (
    document TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    model TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (document, model, ordinal)
) WITHOUT ROWID;
