-- An event is identified by its app, occurrence time and id, as SQLite's events are keyed from its 0026:
-- a retry carries the same id and time and counts once. Keyed by (app_id, id), `event_ids` and
-- `events_by_key` took each random (v4) id at a random leaf of an index the size of every stored event;
-- by time first, new events land among the last hours' entries whatever their ids.
ALTER TABLE event_ids ADD COLUMN occurred_at timestamptz;
UPDATE event_ids x SET occurred_at = e.occurred_at FROM events e
WHERE e.app_id = x.app_id AND e.id = x.id AND e.received_at = x.received_at;
-- Ids whose month's partition retention dropped already (their rows go at its next step) have no event to
-- take a time from: their receipt stands in.
UPDATE event_ids SET occurred_at = received_at WHERE occurred_at IS NULL;
ALTER TABLE event_ids ALTER COLUMN occurred_at SET NOT NULL;
ALTER TABLE event_ids DROP CONSTRAINT event_ids_pkey;
ALTER TABLE event_ids ADD PRIMARY KEY (app_id, occurred_at, id);

DROP INDEX events_by_key;
CREATE INDEX events_by_key ON events (app_id, occurred_at, id);
