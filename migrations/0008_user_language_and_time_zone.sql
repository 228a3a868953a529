-- Each console user may choose the console's language and the time zone pages show times in.
-- NULL language: the browser's (Accept-Language). NULL time zone: not asked yet; the first sign-in
-- stores the browser's, and until then pages show UTC.
ALTER TABLE users ADD COLUMN language TEXT;
ALTER TABLE users ADD COLUMN time_zone TEXT;
