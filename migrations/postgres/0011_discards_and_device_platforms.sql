-- Discards, as SQLite's 0021: counts per campaign, UTC day, test device or not, and reason, and the ids of
-- the counts received lately, so a retried upload (or one sent to two instances) adds its count once.
CREATE TABLE discard_rollups (
    campaign_id bigint NOT NULL,
    day text COLLATE "C" NOT NULL,
    test boolean NOT NULL,
    reason text COLLATE "C" NOT NULL,
    count bigint NOT NULL,
    PRIMARY KEY (campaign_id, day, test, reason)
);

CREATE TABLE discard_ids (
    app_id bigint NOT NULL,
    id text NOT NULL,
    received_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, id)
);
CREATE INDEX discard_ids_by_received_at ON discard_ids (received_at);

-- The platform each device sent from, as SQLite's 0021: per app and platform, a bitmap of device numbers.
CREATE TABLE device_platforms (
    app_id bigint NOT NULL,
    platform text COLLATE "C" NOT NULL,
    chunk bigint NOT NULL,
    bits bytea NOT NULL,
    PRIMARY KEY (app_id, platform, chunk)
);
