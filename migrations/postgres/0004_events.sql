-- Events from delivery components and what reports read instead of them, as SQLite keeps them at its
-- latest (0003, 0004, 0007, 0010, 0012, 0013, 0015, 0017): the rollups, the language rollups, device
-- numbers and their counters, device bitmaps, device sketches with their chunk counts. Days are the
-- `YYYY-MM-DD` text SQLite compares, in byte order ("C"), so a range of days reads the same rows.

-- Which events are stored, by the id the client made (unique per app, as SQLite's events key): the
-- one place that decides whether an event counts. Partitions of `events` could only keep an id unique
-- within a month, so a batch retried across a month's end, or sent to two instances, is decided here,
-- by INSERT ... ON CONFLICT DO NOTHING in the ingesting transaction. An erased or expired event's id
-- goes with it, as its SQLite row does.
CREATE TABLE event_ids (
    app_id bigint NOT NULL,
    id text NOT NULL,
    received_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, id)
);
CREATE INDEX event_ids_by_received_at ON event_ids (received_at);

-- The raw events, one partition per UTC month of their receipt (`received_at`, the server's clock, which
-- is what retention goes by): an expired month is dropped whole instead of deleted row by row. Months are
-- made when the first batch of the month arrives (herald_events_partition). `url` is bytes: a client
-- may send any JSON string, NUL included, which PostgreSQL's text cannot hold.
CREATE TABLE events (
    id text NOT NULL,
    app_id bigint NOT NULL,
    campaign_id bigint NOT NULL,
    type text NOT NULL CHECK (type IN ('impression', 'click', 'dismiss', 'error', 'conversion', 'push_received', 'push_open')),
    occurred_at timestamptz NOT NULL,
    day text COLLATE "C" NOT NULL,
    platform text NOT NULL,
    installation_id text,
    detail text NOT NULL DEFAULT '',
    url bytea,
    test boolean NOT NULL DEFAULT false,
    received_at timestamptz NOT NULL,
    language text
) PARTITION BY RANGE (received_at);
CREATE INDEX events_by_key ON events (app_id, id);
CREATE INDEX events_by_received_at ON events (received_at);

-- The partition of the month `received` falls in, made if missing. Made under a lock so that instances
-- making the same month at once wait for the first; called in its own short transaction before a batch
-- is written, since making a partition locks the whole table.
CREATE FUNCTION herald_events_partition(received timestamptz) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    month_start timestamptz := date_trunc('month', received, 'UTC');
    partition_name text := 'events_' || to_char(month_start AT TIME ZONE 'UTC', 'YYYY_MM');
BEGIN
    IF to_regclass(partition_name) IS NULL THEN
        PERFORM pg_advisory_xact_lock(hashtextextended('herald.events.partitions', 0));
        EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF events FOR VALUES FROM (%L) TO (%L)',
                       partition_name, month_start, month_start + interval '1 month');
    END IF;
END;
$$;

-- Drops every month partition that ends at or before `cutoff` (all its events are past retention);
-- returns how many. Under the partitions' lock, so it never races a month being made.
CREATE FUNCTION herald_drop_expired_event_partitions(cutoff timestamptz) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    partition record;
    dropped bigint := 0;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('herald.events.partitions', 0));
    FOR partition IN
        SELECT c.oid::regclass AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'events'::regclass
    LOOP
        IF (regexp_match(partition.bound, 'TO \(''([^'']+)''\)'))[1]::timestamptz <= cutoff THEN
            EXECUTE format('DROP TABLE %s', partition.name);
            dropped := dropped + 1;
        END IF;
    END LOOP;
    RETURN dropped;
END;
$$;

-- Counts per campaign, UTC day, platform, test or not, type and detail.
CREATE TABLE event_rollups (
    campaign_id bigint NOT NULL,
    day text COLLATE "C" NOT NULL,
    platform text COLLATE "C" NOT NULL,
    test boolean NOT NULL,
    type text COLLATE "C" NOT NULL,
    detail text COLLATE "C" NOT NULL,
    count bigint NOT NULL,
    PRIMARY KEY (campaign_id, day, platform, test, type, detail)
);

-- Counts per campaign, UTC day, test or not, language shown ('' for the default version) and type.
CREATE TABLE event_language_rollups (
    campaign_id bigint NOT NULL,
    day text COLLATE "C" NOT NULL,
    test boolean NOT NULL,
    language text COLLATE "C" NOT NULL,
    type text COLLATE "C" NOT NULL,
    count bigint NOT NULL,
    PRIMARY KEY (campaign_id, day, test, language, type)
);

-- Each installation's dense number within its app; numbers are never reused.
CREATE TABLE device_numbers (
    app_id bigint NOT NULL,
    installation_id text NOT NULL,
    number bigint NOT NULL,
    PRIMARY KEY (app_id, installation_id)
);

CREATE TABLE device_number_counters (
    app_id bigint PRIMARY KEY,
    next_number bigint NOT NULL
);

-- A campaign's devices on a day, in chunks of 4096 device numbers (512 bytes).
CREATE TABLE device_bitmaps (
    campaign_id bigint NOT NULL,
    test boolean NOT NULL,
    day text COLLATE "C" NOT NULL,
    chunk bigint NOT NULL,
    bits bytea NOT NULL,
    PRIMARY KEY (campaign_id, test, day, chunk)
);

-- A campaign's devices on a day as a HyperLogLog sketch (4096 one-byte registers), and the day's chunk rows.
CREATE TABLE device_sketches (
    campaign_id bigint NOT NULL,
    test boolean NOT NULL,
    day text COLLATE "C" NOT NULL,
    chunks bigint NOT NULL,
    registers bytea NOT NULL,
    PRIMARY KEY (campaign_id, test, day)
);
