-- The world: the tables players query and change, built once into a fresh world.db.
-- Write it as the system looked just before your incident began. Plain SQLite; the
-- comments are for the author (players see the tables, not this file).

-- What the deploy bot and the on-call engineer both write: the feature flags.
-- The app shows the checkout page only while `checkout` is enabled.
CREATE TABLE flag (
  name       TEXT PRIMARY KEY,
  enabled    INTEGER NOT NULL,           -- 1 on, 0 off
  updated_by TEXT NOT NULL,
  updated_at TEXT NOT NULL               -- the clock as HH:MM
);

-- The kill switch: the bot checks it before every run (its task's `when:`).
CREATE TABLE automation (
  name    TEXT PRIMARY KEY,
  enabled INTEGER NOT NULL
);

INSERT INTO flag (name, enabled, updated_by, updated_at) VALUES
  ('checkout',   1, 'seed', '09:00'),
  ('new-search', 0, 'seed', '09:00'),  -- off on purpose: "a flag is off" is not the fault
  ('dark-mode',  1, 'seed', '09:00');

INSERT INTO automation (name, enabled) VALUES ('deploy-bot', 1);
