-- A range's unique devices were estimated from a sketch of each of its days (0017): 90 days read 368 KB,
-- and reading them was a sixth of a 90-day report's time on PostgreSQL. Each campaign, test flag and week
-- (Monday to Sunday, `week` the Monday) also gets the union of its days' sketches and the sum of their
-- chunk counts, written by ingestion with the days': a range reads its whole weeks from here and only the
-- days around them from device_sketches (DeviceSketches.Split). The weeks of the days already stored are
-- made from their sketches right after this file (DeviceSketches.fillWeeks).

CREATE TABLE device_week_sketches (
    campaign_id INTEGER NOT NULL,
    test INTEGER NOT NULL,
    week TEXT NOT NULL,
    chunks INTEGER NOT NULL,
    registers BLOB NOT NULL,
    PRIMARY KEY (campaign_id, test, week)
) WITHOUT ROWID;
