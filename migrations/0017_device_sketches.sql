-- A range's unique devices are the union of its days' bitmap chunks (0015): exact, but a chunk per 4096
-- devices a day, so at a million devices a day 90 days are 88,000 rows and 45 MB read per report. Each
-- campaign, test flag and day also gets a HyperLogLog sketch of its devices (4096 one-byte registers,
-- about 1.6 % standard error), and the number of bitmap chunks that day has: a range whose chunks are
-- few is counted exactly from the bitmaps, a larger one estimated from at most a 4 KB sketch a day
-- (DeviceSketches), and reports say it is an estimate. The sketches of the days already stored are made
-- from their bitmaps right after this file (DeviceSketches.fillFromBitmaps).

CREATE TABLE device_sketches (
    campaign_id INTEGER NOT NULL,
    test INTEGER NOT NULL,
    day TEXT NOT NULL,
    chunks INTEGER NOT NULL,
    registers BLOB NOT NULL,
    PRIMARY KEY (campaign_id, test, day)
) WITHOUT ROWID;
