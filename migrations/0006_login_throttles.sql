-- Login throttling counts failures per account, per address, per known browser and per session (for
-- password changes) in one row each, instead of one row per failure: a flood of failures cannot grow the
-- table beyond the things it names, and rows are swept once their failures are forgotten.
DROP TABLE login_failures;

CREATE TABLE login_throttles (
    kind TEXT NOT NULL CHECK (kind IN ('account', 'address', 'browser', 'session')),
    subject TEXT NOT NULL,
    failures INTEGER NOT NULL CHECK (failures > 0),
    first_failure_at TEXT NOT NULL,
    last_failure_at TEXT NOT NULL,
    PRIMARY KEY (kind, subject)
) WITHOUT ROWID;
CREATE INDEX login_throttles_by_last_failure ON login_throttles(last_failure_at);
