-- SQLite's 0025: an app's installations counted by what the server's targeting reads of them (platform,
-- app version, language, country), and how many hold a live push token, for audience estimates. An absent
-- app version, language or country is ''.
--
-- Not kept in place as SQLite's triggers keep them: a count row would be locked by each registration in
-- its group until commit, and registrations through several instances would queue, and could deadlock,
-- on the most common groups. The trigger appends each change as a +1/-1 row instead (no key, so no lock on
-- another's row), and an estimate folds the app's appended rows into its counts first, in one statement
-- that updates the count rows in key order (`PostgresInstallationStore.profiles`).
CREATE TABLE installation_profiles (
    app_id bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    platform text NOT NULL,
    app_version text NOT NULL,
    language text NOT NULL,
    country text NOT NULL,
    -- No CHECK that these stay positive: PostgreSQL checks the row an upsert proposes (a fold's net -1)
    -- before it finds the row it updates.
    installations bigint NOT NULL,
    with_token bigint NOT NULL,
    PRIMARY KEY (app_id, platform, app_version, language, country)
);

CREATE TABLE installation_profile_changes (
    app_id bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    platform text NOT NULL,
    app_version text NOT NULL,
    language text NOT NULL,
    country text NOT NULL,
    installations integer NOT NULL,
    with_token integer NOT NULL
);
CREATE INDEX installation_profile_changes_by_app ON installation_profile_changes(app_id);

INSERT INTO installation_profiles (app_id, platform, app_version, language, country, installations, with_token)
SELECT app_id, platform, COALESCE(app_version, ''), COALESCE(language, ''), COALESCE(country, ''), count(*),
    count(*) FILTER (WHERE push_token IS NOT NULL)
FROM installations GROUP BY 1, 2, 3, 4, 5;

CREATE FUNCTION herald_installation_profile_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.app_id = NEW.app_id AND OLD.platform = NEW.platform
        AND OLD.app_version IS NOT DISTINCT FROM NEW.app_version AND OLD.language IS NOT DISTINCT FROM NEW.language
        AND OLD.country IS NOT DISTINCT FROM NEW.country AND (OLD.push_token IS NULL) = (NEW.push_token IS NULL) THEN
        -- Most registrations change nothing targeting reads: devices register again every week.
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO installation_profile_changes
        VALUES (OLD.app_id, OLD.platform, COALESCE(OLD.app_version, ''), COALESCE(OLD.language, ''), COALESCE(OLD.country, ''), -1,
                CASE WHEN OLD.push_token IS NULL THEN 0 ELSE -1 END);
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        INSERT INTO installation_profile_changes
        VALUES (NEW.app_id, NEW.platform, COALESCE(NEW.app_version, ''), COALESCE(NEW.language, ''), COALESCE(NEW.country, ''), 1,
                CASE WHEN NEW.push_token IS NULL THEN 0 ELSE 1 END);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER installation_profile_changes AFTER INSERT OR UPDATE OR DELETE ON installations
FOR EACH ROW EXECUTE FUNCTION herald_installation_profile_changes();
