-- SQLite's 0019: push due times as whole milliseconds since 1970, and each app's silent refreshes spaced
-- out. The outbox's due times were timestamptz here, which already compare as instants; they become numbers
-- as SQLite's do, so the two schemas stay column for column alike (herald copy moves one into the other).
-- Rewrites push_outbox and its indexes once, in the migration's transaction.
ALTER TABLE push_outbox ALTER COLUMN due_at TYPE bigint
    USING least(floor(extract(epoch FROM due_at) * 1000), 253402300799999)::bigint;
ALTER TABLE push_outbox RENAME COLUMN due_at TO due_at_ms;

ALTER TABLE apps ADD COLUMN push_refresh_minutes integer NOT NULL DEFAULT 20 CHECK (push_refresh_minutes BETWEEN 1 AND 1440);
ALTER TABLE apps ADD COLUMN push_refresh_due_at_ms bigint;
