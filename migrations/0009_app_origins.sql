-- The web origins (scheme://host[:port], stored normalized) whose pages may use an app's key from
-- visitors' browsers: they get CORS on the feed and events. Any other page that sends the key is refused.
CREATE TABLE app_origins (
    id INTEGER PRIMARY KEY,
    app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    origin TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (app_id, origin)
);
