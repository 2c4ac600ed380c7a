-- The model a chat's next reply comes from, as JSON (hearth_core::ModelTarget): NULL is the local
-- engine. A remote target names a provider by id; its API key is never stored here.
ALTER TABLE chats ADD COLUMN model_target TEXT;
