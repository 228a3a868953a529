-- Push due times as numbers, and the silent refreshes of each app spaced out.
--
-- An outbox row's due time was text as GRDB writes dates ("2026-11-21 09:00:00.000"), compared and sorted
-- as text: a device's local 09:00 on 9999-12-31 in a zone west of UTC fell in the year 10000, whose text
-- ("10000-01-01 …") sorts before "2026-…", so the row was due at once. Due times are now whole
-- milliseconds since 1970 (due_at_ms), which compare as the instants do. A row already due in the year
-- 10000 or later (its text is not a four-digit year's) is put at the end of Herald's range, 9999-12-31
-- 23:59:59.999 UTC, instead of first.
DROP INDEX push_outbox_due;
ALTER TABLE push_outbox ADD COLUMN due_at_ms INTEGER NOT NULL DEFAULT 0;
UPDATE push_outbox SET due_at_ms = CASE
    WHEN due_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]'
        THEN CAST(strftime('%s', substr(due_at, 1, 19)) AS INTEGER) * 1000 + CAST(substr(due_at, 21, 3) AS INTEGER)
    WHEN due_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]'
        THEN CAST(strftime('%s', due_at) AS INTEGER) * 1000
    ELSE 253402300799999
END;
ALTER TABLE push_outbox DROP COLUMN due_at;
CREATE INDEX push_outbox_due ON push_outbox(due_at_ms) WHERE state = 'pending';

-- Silent refreshes (publishing, pausing or stopping an in-app campaign with push_refresh_on_change) reach
-- the app's devices at most once every push_refresh_minutes: Apple throttles background pushes to a few
-- an hour, and pausing and resuming a campaign in a loop sent thousands. push_refresh_due_at_ms is when
-- the app's latest refresh was (or is) due; a change inside the quiet period after it is carried by one
-- refresh at the period's end.
ALTER TABLE apps ADD COLUMN push_refresh_minutes INTEGER NOT NULL DEFAULT 20 CHECK (push_refresh_minutes BETWEEN 1 AND 1440);
ALTER TABLE apps ADD COLUMN push_refresh_due_at_ms INTEGER;
