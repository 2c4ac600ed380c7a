-- A tool's result is a message of the tree (hearth_core::Role::Tool): stored as role 'user' (what
-- the model reads it as; the role CHECK of 0001 stays) with its call's record here, as JSON
-- (hearth_core::ToolRun). NULL for every other message.
ALTER TABLE messages ADD COLUMN tool TEXT;
