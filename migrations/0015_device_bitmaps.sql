-- Unique devices over a range were COUNT(DISTINCT installation_id) over campaign_devices, one row per
-- campaign, day and installation: 114 ms for 90 days of one campaign at 10 M events, growing with the
-- events. Instead each installation gets a dense number within its app, and each campaign, test flag and
-- UTC day a bitmap of the numbers seen, in chunks of 4096 (512 bytes): a range is the union of at most a
-- chunk per day, counted bit by bit (DeviceBitmaps). `test` comes before `day` in the key because
-- reports filter by both and range over days.

CREATE TABLE device_numbers (
    app_id INTEGER NOT NULL,
    installation_id TEXT NOT NULL,
    number INTEGER NOT NULL,
    PRIMARY KEY (app_id, installation_id)
) WITHOUT ROWID;

-- The next number each app gives out; numbers are never reused (an erased installation's stays unused).
CREATE TABLE device_number_counters (
    app_id INTEGER PRIMARY KEY,
    next_number INTEGER NOT NULL
);

CREATE TABLE device_bitmaps (
    campaign_id INTEGER NOT NULL,
    test INTEGER NOT NULL,
    day TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    bits BLOB NOT NULL,
    PRIMARY KEY (campaign_id, test, day, chunk)
) WITHOUT ROWID;

-- Numbers for the installations already seen, in the order of their first day; the bitmaps are filled
-- from campaign_devices right after this file, by DeviceBitmaps.fillFromDeviceRows (SQL cannot set bits
-- in a blob), and 0016 drops campaign_devices.
INSERT INTO device_numbers (app_id, installation_id, number)
SELECT app_id, installation_id, ROW_NUMBER() OVER (PARTITION BY app_id ORDER BY first_day, installation_id) - 1
FROM (
    SELECT c.app_id AS app_id, d.installation_id AS installation_id, MIN(d.day) AS first_day
    FROM campaign_devices d JOIN campaigns c ON c.id = d.campaign_id
    GROUP BY c.app_id, d.installation_id
);
INSERT INTO device_number_counters (app_id, next_number)
SELECT app_id, MAX(number) + 1 FROM device_numbers GROUP BY app_id;
