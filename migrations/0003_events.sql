-- Events from delivery components, with daily rollups kept in the same transaction,
-- so reports never scan raw events.

-- `id` is made by the client: a retried batch inserts nothing twice.
-- `detail` is the click action, dismiss type, error code or conversion event.
CREATE TABLE events (
    id TEXT PRIMARY KEY,
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
    received_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX events_by_installation ON events(installation_id) WHERE installation_id IS NOT NULL;

-- Counts per campaign, UTC day, platform, test or not, type and detail.
CREATE TABLE event_rollups (
    campaign_id INTEGER NOT NULL,
    day TEXT NOT NULL,
    platform TEXT NOT NULL,
    test INTEGER NOT NULL,
    type TEXT NOT NULL,
    detail TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, day, platform, test, type, detail)
) WITHOUT ROWID;

-- The installations seen per campaign and day, for unique devices over any range.
CREATE TABLE campaign_devices (
    campaign_id INTEGER NOT NULL,
    day TEXT NOT NULL,
    test INTEGER NOT NULL,
    installation_id TEXT NOT NULL,
    PRIMARY KEY (campaign_id, day, test, installation_id)
) WITHOUT ROWID;
