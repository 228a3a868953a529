-- Ingestion wrote a page of `events_by_installation` for nearly every event: installation ids are
-- random, so each insert landed on a different leaf of the index (measured: the same C inserts ran at
-- 27k rows/s with it and 195k without). Its only reader was an erasure, which is rare and now finds an
-- installation's events by a scan in a read snapshot (EventStore.eraseInstallation), so it goes.
DROP INDEX events_by_installation;
