-- A number that goes up with every change to what an app's feed is built from (campaigns, apps, test
-- devices), whichever process makes it: a server notices another process's change (an import from the
-- command line, another instance) by reading one row, and rebuilds a feed only when it moved, instead of
-- rebuilding every feed on a timer.
CREATE TABLE feed_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    generation INTEGER NOT NULL
);
INSERT INTO feed_generation (id, generation) VALUES (1, 0);

CREATE TRIGGER feed_generation_campaign_insert AFTER INSERT ON campaigns BEGIN UPDATE feed_generation SET generation = generation + 1; END;
CREATE TRIGGER feed_generation_campaign_update AFTER UPDATE ON campaigns BEGIN UPDATE feed_generation SET generation = generation + 1; END;
CREATE TRIGGER feed_generation_campaign_delete AFTER DELETE ON campaigns BEGIN UPDATE feed_generation SET generation = generation + 1; END;
CREATE TRIGGER feed_generation_app_insert AFTER INSERT ON apps BEGIN UPDATE feed_generation SET generation = generation + 1; END;
CREATE TRIGGER feed_generation_app_update AFTER UPDATE ON apps BEGIN UPDATE feed_generation SET generation = generation + 1; END;
CREATE TRIGGER feed_generation_app_delete AFTER DELETE ON apps BEGIN UPDATE feed_generation SET generation = generation + 1; END;
CREATE TRIGGER feed_generation_test_device_insert AFTER INSERT ON test_devices BEGIN UPDATE feed_generation SET generation = generation + 1; END;
CREATE TRIGGER feed_generation_test_device_update AFTER UPDATE ON test_devices BEGIN UPDATE feed_generation SET generation = generation + 1; END;
CREATE TRIGGER feed_generation_test_device_delete AFTER DELETE ON test_devices BEGIN UPDATE feed_generation SET generation = generation + 1; END;
