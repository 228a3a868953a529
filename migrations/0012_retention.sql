-- Raw events past the retention period are deleted oldest first, a few thousand at a time: this index
-- finds them by the server's receipt time without scanning the table. Reports read only the rollups
-- and campaign_devices, which stay.
--
-- The same release turns on incremental vacuum (AppDatabase.migrate, after the migrations: a VACUUM
-- cannot run inside a migration's transaction), so the pages that deletions free are given back to the
-- file system in small steps.
CREATE INDEX events_by_received_at ON events(received_at);
