-- Visitors (the login and setup pages) no longer get a stored session: their forms carry a token signed
-- with a key kept here, and a session row is made only at sign-in.

-- Keys the server makes once per database, so every process on it signs and checks alike.
CREATE TABLE server_secrets (
    name TEXT PRIMARY KEY,
    value BLOB NOT NULL,
    created_at TEXT NOT NULL
);

-- Anonymous sessions from before: every session now belongs to a user.
DELETE FROM sessions WHERE user_id IS NULL;
