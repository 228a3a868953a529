-- A report's language table reads every day of its range from event_language_rollups: 18 rows a day for
-- five languages and the default version, 1,620 for 90 days. Through the key those rows are fetched from
-- the table's pages one by one (141 pages for one campaign's 90 days on bench/reports.py's database, as
-- days of all campaigns are written side by side); this index holds what the report reads, so the days
-- before today, which VACUUM has marked all-visible, are read from the index alone. A 90-day report's
-- statement ran in 0.96-0.98 ms instead of 1.37-1.50 (execution time, p50 of series of 280, on
-- bench/reports.py's database at 1 M events). `count` is in the index, so an increment is no longer a
-- HOT update: one upsert of 18 language rows took 0.45 ms instead of 0.35 (pgbench, one session), in an
-- ingestion batch of 1000 events that takes tens of milliseconds.
CREATE INDEX event_language_rollups_by_campaign ON event_language_rollups (campaign_id, test, day) INCLUDE (language, type, count);
