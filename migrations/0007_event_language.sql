-- Events say which language version of the message the device showed (message.translations), and
-- reports split by it.

-- The version's BCP 47 tag in canonical case (`fa`, `pt-BR`); NULL for the default version.
ALTER TABLE events ADD COLUMN language TEXT;

-- Counts per campaign, UTC day, test or not, language shown ('' for the default version) and type.
-- Apart from event_rollups, whose rows would otherwise multiply by the languages for every platform and
-- detail: a report reads this table for its language split and nothing else does.
CREATE TABLE event_language_rollups (
    campaign_id INTEGER NOT NULL,
    day TEXT NOT NULL,
    test INTEGER NOT NULL,
    language TEXT NOT NULL,
    type TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, day, test, language, type)
) WITHOUT ROWID;

-- Every event stored before now came from a client that knew no language versions: it showed the default.
INSERT INTO event_language_rollups (campaign_id, day, test, language, type, count)
SELECT campaign_id, day, test, '', type, SUM(count) FROM event_rollups GROUP BY campaign_id, day, test, type;
