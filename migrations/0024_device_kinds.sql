-- The funnel counts devices, not events: how many devices were shown a campaign and how many of them
-- converted. The device bitmaps and their sketches (0015, 0017, 0018) gain a kind: `seen` (any event of
-- the campaign, what they held until now), `exposed` (an impression) and `converted` (a conversion).
-- Ingestion sets a device's bit in `seen` and in its event's own kind, so the funnel's unique devices
-- come from the same bitmaps and sketches as the reports' unique devices, exact or estimated alike.
-- `kind` comes after `test` in the keys: every read names one kind and ranges over days.
--
-- The rows stored before are all `seen`; `exposed` and `converted` are counted from this migration on.
-- SQLite cannot change a primary key, so each table is rebuilt.

CREATE TABLE device_bitmaps_with_kind (
    campaign_id INTEGER NOT NULL,
    test INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('seen', 'exposed', 'converted')),
    day TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    bits BLOB NOT NULL,
    PRIMARY KEY (campaign_id, test, kind, day, chunk)
) WITHOUT ROWID;
INSERT INTO device_bitmaps_with_kind (campaign_id, test, kind, day, chunk, bits)
SELECT campaign_id, test, 'seen', day, chunk, bits FROM device_bitmaps;
DROP TABLE device_bitmaps;
ALTER TABLE device_bitmaps_with_kind RENAME TO device_bitmaps;

CREATE TABLE device_sketches_with_kind (
    campaign_id INTEGER NOT NULL,
    test INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('seen', 'exposed', 'converted')),
    day TEXT NOT NULL,
    chunks INTEGER NOT NULL,
    registers BLOB NOT NULL,
    PRIMARY KEY (campaign_id, test, kind, day)
) WITHOUT ROWID;
INSERT INTO device_sketches_with_kind (campaign_id, test, kind, day, chunks, registers)
SELECT campaign_id, test, 'seen', day, chunks, registers FROM device_sketches;
DROP TABLE device_sketches;
ALTER TABLE device_sketches_with_kind RENAME TO device_sketches;

CREATE TABLE device_week_sketches_with_kind (
    campaign_id INTEGER NOT NULL,
    test INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('seen', 'exposed', 'converted')),
    week TEXT NOT NULL,
    chunks INTEGER NOT NULL,
    registers BLOB NOT NULL,
    PRIMARY KEY (campaign_id, test, kind, week)
) WITHOUT ROWID;
INSERT INTO device_week_sketches_with_kind (campaign_id, test, kind, week, chunks, registers)
SELECT campaign_id, test, 'seen', week, chunks, registers FROM device_week_sketches;
DROP TABLE device_week_sketches;
ALTER TABLE device_week_sketches_with_kind RENAME TO device_week_sketches;
