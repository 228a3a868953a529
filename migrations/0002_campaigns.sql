-- Campaigns with their revision history, per-app delivery settings, and test devices.

ALTER TABLE apps ADD COLUMN min_interval_seconds INTEGER NOT NULL DEFAULT 30 CHECK (min_interval_seconds >= 0);

-- `document` is the Campaign JSON (custom data as ordered pairs); the other columns copy what lists
-- and the feed filter and sort on. `state` is what people did; the status shown adds the schedule.
CREATE TABLE campaigns (
    id INTEGER PRIMARY KEY,
    app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('draft', 'published', 'paused', 'stopped', 'archived')),
    layout TEXT NOT NULL,
    priority INTEGER NOT NULL CHECK (priority BETWEEN 1 AND 10),
    start_at TEXT,
    end_at TEXT,
    -- When it went live: the publish time, or the scheduled start if later. Ties in priority go to the latest.
    started_at TEXT,
    test_on_device INTEGER NOT NULL DEFAULT 0 CHECK (test_on_device IN (0, 1)),
    document TEXT NOT NULL,
    revision INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL
);
CREATE INDEX campaigns_by_app_state ON campaigns(app_id, state);
CREATE INDEX campaigns_by_update ON campaigns(updated_at);

CREATE TABLE campaign_revisions (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    revision INTEGER NOT NULL,
    state TEXT NOT NULL,
    document TEXT NOT NULL,
    author TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (campaign_id, revision)
);

CREATE TABLE test_devices (
    id INTEGER PRIMARY KEY,
    app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    installation_id TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (app_id, installation_id)
);
