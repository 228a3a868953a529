-- Discards: messages a delivery client chose and did not show, counted on the device per campaign, reason
-- and UTC day, and uploaded with its events as one count each (docs/reports.md, "Discards"). A table of
-- their own: the events table's type CHECK would have to be rebuilt to take them, and one row per count
-- received would grow with every upload.

-- Counts per campaign, UTC day, test device or not, and reason: what reports read.
CREATE TABLE discard_rollups (
    campaign_id INTEGER NOT NULL,
    day TEXT NOT NULL,
    test INTEGER NOT NULL,
    reason TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, day, test, reason)
) WITHOUT ROWID;

-- The ids of the counts received lately, so a retried upload adds its count once. A client retries within
-- minutes; ids older than a week are forgotten as new counts arrive, so the table stays small.
CREATE TABLE discard_ids (
    app_id INTEGER NOT NULL,
    id TEXT NOT NULL,
    received_at TEXT NOT NULL,
    PRIMARY KEY (app_id, id)
) WITHOUT ROWID;
CREATE INDEX discard_ids_by_received_at ON discard_ids (received_at);

-- The platform each device sent from: per app and platform, a bitmap of its device numbers in chunks of
-- 4096, as device_bitmaps (0015). A range's unique devices on a platform are its union of device_bitmaps
-- ANDed with these, so the stats' byPlatform counts devices without a row per device. Filled as devices
-- send events from now on: devices not heard from since are in no platform's count.
CREATE TABLE device_platforms (
    app_id INTEGER NOT NULL,
    platform TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    bits BLOB NOT NULL,
    PRIMARY KEY (app_id, platform, chunk)
) WITHOUT ROWID;
