-- lost-update-basics: one configuration row, two writers, and the guards that stop them.
--
-- The app sends its writes to whichever database host config.primary_db names.
-- Nothing here guards anything yet: that is the player's job.

-- The database hosts the app can use. `generation` counts up as hosts are added;
-- the clean-up job assumes anything two generations old is no longer used.
CREATE TABLE host (
  name       TEXT PRIMARY KEY,
  address    TEXT NOT NULL,
  status     TEXT NOT NULL DEFAULT 'active',   -- active | retired
  generation INTEGER NOT NULL
);

-- The one configuration row that matters: which host is the primary.
-- `value` is a host name, but nothing says it must exist (no foreign key).
-- Every writer bumps `version`; no writer checks it.
CREATE TABLE config (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL,
  version    INTEGER NOT NULL,
  updated_by TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- Who may change primary_db right now. Each job takes the lease before it works and
-- the token goes up every time it changes hands. `expires_at` is in minutes after 09:00.
-- The jobs take the lease; their writes never look at it.
CREATE TABLE lease (
  name       TEXT PRIMARY KEY,
  holder     TEXT NOT NULL,
  token      INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);

-- Hosts that serve reads, with their share of the traffic. A host listed twice gets
-- twice its share.
CREATE TABLE read_pool (
  host   TEXT NOT NULL,
  weight INTEGER NOT NULL
);

-- The inventory system's export of host addresses, which writer A copies into host.
CREATE TABLE inventory (
  name        TEXT PRIMARY KEY,
  address     TEXT NOT NULL,
  exported_at TEXT NOT NULL
);

-- The automation's run log: one line per job run, written by the jobs themselves.
-- outcome: 'done', or for the later runs what the run left behind
-- ('overwrote primary_db', 'changed nothing', 'stopped by an error', ...).
CREATE TABLE job_run (
  id      INTEGER PRIMARY KEY,
  at      TEXT NOT NULL,
  role    TEXT NOT NULL,
  job     TEXT NOT NULL,
  outcome TEXT NOT NULL
);

INSERT INTO host (name, address, status, generation) VALUES
  ('db-1', '10.0.1.11', 'active', 1),
  ('db-2', '10.0.1.12', 'active', 2),
  ('db-3', '10.0.1.13', 'active', 3);

INSERT INTO config (key, value, version, updated_by, updated_at) VALUES
  ('primary_db', 'db-1', 1, 'seed', '08:30');

INSERT INTO lease (name, holder, token, expires_at) VALUES
  ('primary_db', 'writer-b', 1, 3);

INSERT INTO read_pool (host, weight) VALUES
  ('db-2', 10);

INSERT INTO inventory (name, address, exported_at) VALUES
  ('db-1', '10.0.1.11', '06:00'),
  ('db-2', '10.0.1.12', '06:00'),
  ('db-3', '10.0.1.13', '06:00');
