-- Test sends: a campaign's current document sent to chosen test devices, apart from the live campaign
-- (its state, revision and stats are not touched). And audit lines kept with their arguments, so the
-- audit page can write them in its reader's language.

-- `document` is the Campaign JSON as it was when sent (revision `revision`). An in-app test is in the
-- chosen devices' feeds until `expires_at`; a push test's notifications are push_outbox rows marked with it.
CREATE TABLE test_sends (
    id INTEGER PRIMARY KEY,
    app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    channel TEXT NOT NULL CHECK (channel IN ('in_app', 'push')),
    revision INTEGER NOT NULL,
    document TEXT NOT NULL,
    sent_at TEXT NOT NULL,
    sent_by TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX test_sends_live ON test_sends(app_id, expires_at);
CREATE INDEX test_sends_by_campaign ON test_sends(campaign_id, id);

-- Each device a test went to (in the order chosen), named as it was then, and what happened at once:
-- `in_feed` (in-app), `queued` (push: the push_outbox row says what followed), `no_token` (push: nothing
-- to send to).
CREATE TABLE test_send_devices (
    test_send_id INTEGER NOT NULL REFERENCES test_sends(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    installation_id TEXT NOT NULL,
    name TEXT NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('in_feed', 'queued', 'no_token')),
    PRIMARY KEY (test_send_id, installation_id)
);

-- A test's notification: campaign_id stays NULL, so the campaign's sending, its figures and the daily cap
-- never count it.
ALTER TABLE push_outbox ADD COLUMN test_send_id INTEGER REFERENCES test_sends(id) ON DELETE CASCADE;
CREATE INDEX push_outbox_by_test_send ON push_outbox(test_send_id) WHERE test_send_id IS NOT NULL;

CREATE TRIGGER feed_generation_test_send_insert AFTER INSERT ON test_sends BEGIN UPDATE feed_generation SET generation = generation + 1; END;
CREATE TRIGGER feed_generation_test_send_delete AFTER DELETE ON test_sends BEGIN UPDATE feed_generation SET generation = generation + 1; END;

-- `{"subject": kind, "details": kind, "values": {…}}` (AuditLine.storedArguments); NULL on lines written before.
ALTER TABLE audit_log ADD COLUMN arguments TEXT;
