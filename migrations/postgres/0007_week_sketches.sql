-- As SQLite's migration 0018: each campaign, test flag and week (Monday to Sunday, `week` the Monday) gets
-- the union of its days' sketches and the sum of their chunk counts, written by ingestion with the days'.
-- A 90-day report reads at most 12 weeks and 12 days of sketches instead of 90 days. Kept in the row
-- uncompressed, as the days' are (0006). The weeks of the days already stored are made from their
-- sketches right after this file (PostgresDeviceRows.fillWeeks).
CREATE TABLE device_week_sketches (
    campaign_id bigint NOT NULL,
    test boolean NOT NULL,
    week text COLLATE "C" NOT NULL,
    chunks bigint NOT NULL,
    registers bytea NOT NULL,
    PRIMARY KEY (campaign_id, test, week)
);
ALTER TABLE device_week_sketches ALTER COLUMN registers SET STORAGE PLAIN;
