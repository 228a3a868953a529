-- Event ids are made by clients, so they are unique per app, not across apps: with one key for all
-- apps, one app's ids made another app's events count as duplicates (and were silently dropped).
-- SQLite cannot change a primary key in place: the table is rebuilt with (app_id, id).

CREATE TABLE events_rekeyed (
    id TEXT NOT NULL,
    app_id INTEGER NOT NULL,
    campaign_id INTEGER NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('impression', 'click', 'dismiss', 'error', 'conversion')),
    occurred_at TEXT NOT NULL,
    day TEXT NOT NULL,
    platform TEXT NOT NULL,
    installation_id TEXT,
    detail TEXT NOT NULL DEFAULT '',
    url TEXT,
    test INTEGER NOT NULL DEFAULT 0 CHECK (test IN (0, 1)),
    received_at TEXT NOT NULL,
    PRIMARY KEY (app_id, id)
) WITHOUT ROWID;

INSERT INTO events_rekeyed (id, app_id, campaign_id, type, occurred_at, day, platform, installation_id, detail, url, test, received_at)
SELECT id, app_id, campaign_id, type, occurred_at, day, platform, installation_id, detail, url, test, received_at FROM events;

DROP TABLE events;
ALTER TABLE events_rekeyed RENAME TO events;
CREATE INDEX events_by_installation ON events(installation_id) WHERE installation_id IS NOT NULL;
