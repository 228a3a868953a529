-- Sending push campaigns: each app's provider credentials (secrets encrypted at rest), a durable
-- outbox with one row per installation and campaign, and per-app push settings.

-- The .p8 key and the service-account file are stored sealed (AES-GCM, `SecretBox`) with a key kept
-- outside the database, so a copy of the database alone does not carry them.
CREATE TABLE app_push_credentials (
    app_id INTEGER PRIMARY KEY REFERENCES apps(id) ON DELETE CASCADE,
    apns_key_sealed BLOB,
    apns_key_id TEXT,
    apns_team_id TEXT,
    apns_topic TEXT,
    apns_url TEXT,
    fcm_account_sealed BLOB,
    fcm_project_id TEXT,
    fcm_client_email TEXT,
    fcm_url TEXT,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL
);

-- At most this many pushes reach one device of the app in 24 hours (NULL: no cap); and whether
-- publishing or pausing an in-app campaign sends the app's devices a silent push to fetch the feed.
ALTER TABLE apps ADD COLUMN push_daily_cap INTEGER CHECK (push_daily_cap IS NULL OR push_daily_cap BETWEEN 1 AND 100);
ALTER TABLE apps ADD COLUMN push_refresh_on_change INTEGER NOT NULL DEFAULT 0 CHECK (push_refresh_on_change IN (0, 1));

-- One row per campaign being sent: how far the fan-out over installations has gone, so a restart
-- continues it instead of starting over.
CREATE TABLE push_sends (
    campaign_id INTEGER PRIMARY KEY REFERENCES campaigns(id) ON DELETE CASCADE,
    app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    planned_through INTEGER NOT NULL DEFAULT 0,
    planned_all INTEGER NOT NULL DEFAULT 0 CHECK (planned_all IN (0, 1)),
    started_at TEXT NOT NULL,
    finished_at TEXT
);

-- campaign_id is NULL for a silent feed refresh. `state`: pending → sending → sent, or failed
-- (reason: the provider's), unregistered (the token was dead and is removed), skipped (frequency
-- cap, no token any more), unknown (Herald stopped between handing it to the provider and hearing
-- back: never sent again, so no device gets a campaign twice).
CREATE TABLE push_outbox (
    id INTEGER PRIMARY KEY,
    app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    campaign_id INTEGER REFERENCES campaigns(id) ON DELETE CASCADE,
    installation_id TEXT NOT NULL,
    provider TEXT NOT NULL CHECK (provider IN ('apns', 'fcm')),
    token TEXT NOT NULL,
    platform TEXT NOT NULL,
    language TEXT,
    due_at TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'unregistered', 'skipped', 'unknown')),
    attempts INTEGER NOT NULL DEFAULT 0,
    reason TEXT,
    sent_at TEXT,
    UNIQUE (campaign_id, installation_id)
);
CREATE INDEX push_outbox_due ON push_outbox(due_at) WHERE state = 'pending';
CREATE INDEX push_outbox_sending ON push_outbox(state) WHERE state = 'sending';
CREATE INDEX push_outbox_by_campaign ON push_outbox(campaign_id, state);
CREATE INDEX push_outbox_recent_by_device ON push_outbox(app_id, installation_id, sent_at) WHERE state = 'sent';
