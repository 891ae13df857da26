-- The isolation lab: two Enactors, one endpoint, and the night's read-check-write.
--
-- Each Enactor carries a plan. It reads the endpoint's active plan, checks that its own
-- plan is newer, and a few minutes later writes its plan. Whether the later write can
-- undo a newer one depends on how the read and the write are held together: the
-- transaction around them, its isolation level, a row lock, a version check.

-- The DNS plans, one per generation; a higher id is newer.
CREATE TABLE plan (
  id         INTEGER PRIMARY KEY,
  created_at TEXT NOT NULL
);

-- The endpoint the Enactors apply plans to. Every apply bumps `version`; nothing checks it.
CREATE TABLE endpoint (
  name           TEXT PRIMARY KEY,
  active_plan_id INTEGER NOT NULL,
  version        INTEGER NOT NULL,
  updated_by     TEXT NOT NULL,
  updated_at     TEXT NOT NULL
);

-- Which plan each Enactor carries in each round. `starts` is minutes after 23:30: the
-- rounds start at 23:40, 23:50 and 00:00.
CREATE TABLE work (
  starts  INTEGER NOT NULL,
  enactor TEXT NOT NULL,
  plan_id INTEGER NOT NULL,
  PRIMARY KEY (starts, enactor)
);

-- What each Enactor decided about its plan, written in the same transaction as its apply:
-- 'applied', 'kept the newer active plan', or (written by the planner when an Enactor has
-- not decided by the end of its round) 'gave up'.
CREATE TABLE enactor_run (
  id      INTEGER PRIMARY KEY,
  at      TEXT NOT NULL,
  role    TEXT NOT NULL,
  plan_id INTEGER NOT NULL,
  outcome TEXT NOT NULL
);

INSERT INTO plan (id, created_at) VALUES
  (1, '23:00'), (2, '23:10'), (3, '23:20'), (4, '23:36'), (5, '23:38'),
  (6, '23:46'), (7, '23:48'), (8, '23:56'), (9, '23:58');

INSERT INTO endpoint (name, active_plan_id, version, updated_by, updated_at) VALUES
  ('dynamodb.us-east-1.amazonaws.com', 3, 1, 'enactor-a', '23:20');

INSERT INTO work (starts, enactor, plan_id) VALUES
  (10, 'enactor-b', 4), (10, 'enactor-a', 5),
  (20, 'enactor-b', 6), (20, 'enactor-a', 7),
  (30, 'enactor-b', 9), (30, 'enactor-a', 8);
