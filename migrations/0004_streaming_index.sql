-- Start-up marks replies left streaming by a crash as interrupted; with a million messages a
-- full scan for them took most of the start. This index holds only those rows (usually none).
CREATE INDEX messages_streaming ON messages (id) WHERE status = 'streaming';
