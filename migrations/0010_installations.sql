-- Installations that registered with `PUT /api/v1/installations/{installationId}`: what the device said
-- about itself (for targeting pushes on the server) and its push token. And two event types for pushes.

-- `id` is the rowid: the push sender pages through an app's tokens by it.
-- A token pruned because its provider called it dead leaves push_token NULL and says when and why; its
-- provider stays, to say whose token it was.
CREATE TABLE installations (
    id INTEGER PRIMARY KEY,
    app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    installation_id TEXT NOT NULL,
    platform TEXT NOT NULL CHECK (platform IN ('ios', 'android', 'web')),
    push_provider TEXT CHECK (push_provider IN ('apns', 'fcm')),
    push_token TEXT CHECK (push_token IS NULL OR push_provider IS NOT NULL),
    app_version TEXT,
    -- BCP 47 in canonical case (`pt-BR`).
    language TEXT,
    -- ISO 3166 alpha-2, upper case.
    country TEXT,
    -- An IANA name.
    time_zone TEXT,
    notifications_allowed INTEGER NOT NULL CHECK (notifications_allowed IN (0, 1)),
    token_removed_at TEXT,
    token_removed_reason TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (app_id, installation_id)
);

-- A token belongs to one installation of an app (a reinstall takes it over), and dead-token pruning
-- finds it by provider and value.
CREATE UNIQUE INDEX installations_by_token ON installations(app_id, push_provider, push_token) WHERE push_token IS NOT NULL;
-- The sender's pages: an app's installations with a token of one provider, in rowid order.
CREATE INDEX installations_with_tokens ON installations(app_id, push_provider) WHERE push_token IS NOT NULL;

-- `push_received` and `push_open` carry the push campaign's id and count in the same rollups as every
-- other event. SQLite cannot widen a CHECK in place: the events table is rebuilt, as 0004 did.
CREATE TABLE events_with_push (
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
    PRIMARY KEY (app_id, id)
) WITHOUT ROWID;

INSERT INTO events_with_push (id, app_id, campaign_id, type, occurred_at, day, platform, installation_id, detail, url, test, received_at, language)
SELECT id, app_id, campaign_id, type, occurred_at, day, platform, installation_id, detail, url, test, received_at, language FROM events;

DROP TABLE events;
ALTER TABLE events_with_push RENAME TO events;
CREATE INDEX events_by_installation ON events(installation_id) WHERE installation_id IS NOT NULL;
