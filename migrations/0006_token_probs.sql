-- Each token of a local reply with the distribution it was drawn from (JSON array of
-- hearth_core::TokenProbs), for the token inspector. Kept apart from messages: large, and read
-- only when a reply is inspected.
CREATE TABLE token_probs (
    message_id INTEGER PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    tokens     TEXT NOT NULL
);
