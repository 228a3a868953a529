-- SQLite's 0023: when each installation last registered, whatever changed, so retention can delete the
-- installations that have not registered for the retention period. Rows already here count as
-- registered when they were last updated.
ALTER TABLE installations ADD COLUMN registered_at timestamptz;
UPDATE installations SET registered_at = updated_at;
ALTER TABLE installations ALTER COLUMN registered_at SET NOT NULL;
CREATE INDEX installations_by_registered_at ON installations(registered_at);
