-- SQLite's 0024: the device bitmaps and their sketches gain a kind, `seen` (any event of the campaign,
-- what they held until now), `exposed` (an impression) or `converted` (a conversion), so the funnel
-- counts devices shown a campaign and devices that converted from the same bitmaps and sketches as the
-- reports' unique devices. `kind` comes after `test` in the keys: every read names one kind and ranges
-- over days. The rows stored before are all `seen`; the other kinds are counted from here on. The
-- default only fills the rows already here: every writer names the kind.
ALTER TABLE device_bitmaps ADD COLUMN kind text COLLATE "C" NOT NULL DEFAULT 'seen' CHECK (kind IN ('seen', 'exposed', 'converted'));
ALTER TABLE device_bitmaps ALTER COLUMN kind DROP DEFAULT;
ALTER TABLE device_bitmaps DROP CONSTRAINT device_bitmaps_pkey, ADD PRIMARY KEY (campaign_id, test, kind, day, chunk);

ALTER TABLE device_sketches ADD COLUMN kind text COLLATE "C" NOT NULL DEFAULT 'seen' CHECK (kind IN ('seen', 'exposed', 'converted'));
ALTER TABLE device_sketches ALTER COLUMN kind DROP DEFAULT;
ALTER TABLE device_sketches DROP CONSTRAINT device_sketches_pkey, ADD PRIMARY KEY (campaign_id, test, kind, day);

ALTER TABLE device_week_sketches ADD COLUMN kind text COLLATE "C" NOT NULL DEFAULT 'seen' CHECK (kind IN ('seen', 'exposed', 'converted'));
ALTER TABLE device_week_sketches ALTER COLUMN kind DROP DEFAULT;
ALTER TABLE device_week_sketches DROP CONSTRAINT device_week_sketches_pkey, ADD PRIMARY KEY (campaign_id, test, kind, week);
