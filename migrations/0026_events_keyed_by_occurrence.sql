-- The events table was keyed (app_id, id), so each insert went where its id sorts. Herald's clients
-- make time-ordered ids (UUIDv7), which land at the table's end, but third-party clients and imports
-- send random ones (v4): each such insert dirtied a random page of the whole table, and once the table
-- outgrew the page cache every batch waited on reads (measured on 2 M events: 18-19 k events/s, slowing to
-- 0.62-0.70 of the first 200 k's rate by the last, batch p99 0.56-0.65 s; bench/history.md). Keyed (app_id, occurred_at, id), new events land
-- among the last hours' rows whatever their ids, and that part of the table stays in the cache.
-- A retried event carries the same id and occurrence time, so it is still found and counted once; the
-- same id sent with another time is another event (docs/reports.md, "Duplicates").
-- SQLite cannot change a primary key in place: the table is rebuilt, as 0004 and 0010 did, in key order
-- so the copy appends.
CREATE TABLE events_by_occurrence (
    id TEXT NOT NULL,
    app_id INTEGER NOT NULL,
    campaign_id INTEGER NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('impression', 'click', 'dismiss', 'error', 'conversion', 'push_received', 'push_open')),
    occurred_at TEXT NOT NULL,
    day TEXT NOT NULL,
    platform TEXT NOT NULL,
    installation_id TEXT,
    detail TEXT NOT NULL DEFAULT '',
    url TEXT,
    test INTEGER NOT NULL DEFAULT 0 CHECK (test IN (0, 1)),
    received_at TEXT NOT NULL,
    language TEXT,
    PRIMARY KEY (app_id, occurred_at, id)
) WITHOUT ROWID;

INSERT INTO events_by_occurrence (id, app_id, campaign_id, type, occurred_at, day, platform, installation_id, detail, url, test, received_at, language)
SELECT id, app_id, campaign_id, type, occurred_at, day, platform, installation_id, detail, url, test, received_at, language FROM events
ORDER BY app_id, occurred_at, id;

DROP TABLE events;
ALTER TABLE events_by_occurrence RENAME TO events;
CREATE INDEX events_by_received_at ON events(received_at);
