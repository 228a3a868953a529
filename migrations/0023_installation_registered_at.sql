-- When each installation last registered (`PUT /api/v1/installations/{id}`), whether or not anything in
-- its registration changed: delivery clients register again at least once a week while the app is used,
-- and retention deletes the installations that have not registered for the retention period, so a
-- phone thrown away (or a fake token registered once) leaves the push audience instead of staying in it
-- for good. updated_at could not serve: the server moves it too (a token pruned, or taken over).
--
-- Rows already here count as registered when they were last updated, the nearest time Herald knows.
ALTER TABLE installations ADD COLUMN registered_at TEXT NOT NULL DEFAULT '';
UPDATE installations SET registered_at = updated_at;
-- Retention finds the oldest registrations first, without scanning the table.
CREATE INDEX installations_by_registered_at ON installations(registered_at);
