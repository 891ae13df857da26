-- The world of dynamodb-dns-race: the DynamoDB DNS management system of us-east-1,
-- as it stands at 23:00 PDT on Sunday 19 October 2025.
--
-- Shaped after AWS's post-event summary and the DAT453 talk: a Planner writes one regional
-- plan per generation (load balancers and weights for every endpoint), three Enactors apply
-- plans to the endpoints and clean up plans far older than the one they applied.
-- Invented for play (source: exercise-assumption): plan numbers, the addresses (documentation
-- ranges), the zones, the weights and the Planner's rotation of load balancers.

-- The load balancers the Planner spreads each endpoint's traffic over.
CREATE TABLE load_balancer (
    address  TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    zone     TEXT NOT NULL,
    slot     INTEGER NOT NULL CHECK (slot BETWEEN 0 AND 3)
);

-- One regional DNS plan per generation; ids only go up.
CREATE TABLE plan (
    id         INTEGER PRIMARY KEY,
    created_at TEXT NOT NULL
);

-- What a plan gives each endpoint: load balancer addresses and weights.
-- Deleting a plan deletes its records.
CREATE TABLE plan_record (
    plan_id  INTEGER NOT NULL REFERENCES plan (id) ON DELETE CASCADE,
    endpoint TEXT NOT NULL,
    address  TEXT NOT NULL,
    weight   INTEGER NOT NULL CHECK (weight > 0),
    PRIMARY KEY (plan_id, endpoint, address)
);

-- What each endpoint serves now. active_plan_id has no foreign key: nothing stops it
-- pointing at a plan that no longer exists (the latent bug). rollback_plan_id must point at
-- an existing plan: every apply moves the old active plan into it. (RESTRICT refuses a
-- delete at the plan it cannot take, before the rest of the statement's work, where a plain
-- key would refuse at the statement's end, after deleting every other plan's records.)
CREATE TABLE endpoint (
    name             TEXT PRIMARY KEY,
    active_plan_id   INTEGER,
    rollback_plan_id INTEGER REFERENCES plan (id) ON DELETE RESTRICT,
    updated_by       TEXT,
    updated_at       TEXT
);

-- What each endpoint resolves to right now: the records of its active plan.
CREATE VIEW dns_answer (endpoint, address, weight) AS
    SELECT e.name, r.address, r.weight
    FROM endpoint AS e
    JOIN plan_record AS r ON r.plan_id = e.active_plan_id AND r.endpoint = e.name;

-- The kill switch. Every automated Planner and Enactor action checks its row first.
CREATE TABLE automation (
    name    TEXT PRIMARY KEY,
    enabled INTEGER NOT NULL CHECK (enabled IN (0, 1))
);

INSERT INTO automation (name, enabled) VALUES
    ('dns-planner', 1),
    ('dns-enactor', 1);

INSERT INTO load_balancer (address, endpoint, zone, slot) VALUES
    ('192.0.2.11',       'dynamodb.us-east-1.amazonaws.com',         'use1-az1', 0),
    ('192.0.2.12',       'dynamodb.us-east-1.amazonaws.com',         'use1-az2', 1),
    ('192.0.2.13',       'dynamodb.us-east-1.amazonaws.com',         'use1-az4', 2),
    ('192.0.2.14',       'dynamodb.us-east-1.amazonaws.com',         'use1-az6', 3),
    ('198.51.100.21',    'dynamodb-fips.us-east-1.amazonaws.com',    'use1-az1', 0),
    ('198.51.100.22',    'dynamodb-fips.us-east-1.amazonaws.com',    'use1-az2', 1),
    ('198.51.100.23',    'dynamodb-fips.us-east-1.amazonaws.com',    'use1-az4', 2),
    ('198.51.100.24',    'dynamodb-fips.us-east-1.amazonaws.com',    'use1-az6', 3),
    ('2001:db8:ddb::31', 'dynamodb.us-east-1.api.aws',               'use1-az1', 0),
    ('2001:db8:ddb::32', 'dynamodb.us-east-1.api.aws',               'use1-az2', 1),
    ('2001:db8:ddb::33', 'dynamodb.us-east-1.api.aws',               'use1-az4', 2),
    ('2001:db8:ddb::34', 'dynamodb.us-east-1.api.aws',               'use1-az6', 3),
    ('203.0.113.41',     'streams.dynamodb.us-east-1.amazonaws.com', 'use1-az1', 0),
    ('203.0.113.42',     'streams.dynamodb.us-east-1.amazonaws.com', 'use1-az2', 1),
    ('203.0.113.43',     'streams.dynamodb.us-east-1.amazonaws.com', 'use1-az4', 2),
    ('203.0.113.44',     'streams.dynamodb.us-east-1.amazonaws.com', 'use1-az6', 3);

-- Plans 111..124, one every two minutes up to 22:59 (older generations already cleaned up).
WITH RECURSIVE generation (id) AS (
    SELECT 111
    UNION ALL
    SELECT id + 1 FROM generation WHERE id < 124
)
INSERT INTO plan (id, created_at)
SELECT id, printf('22:%02d', 59 - 2 * (124 - id)) FROM generation;

-- Each plan drains one load balancer per endpoint (it rotates) and weights the other three.
-- This is the same rule the Planner's own statement uses.
INSERT INTO plan_record (plan_id, endpoint, address, weight)
SELECT p.id, lb.endpoint, lb.address, 10 * (1 + (p.id + lb.slot) % 3)
FROM plan AS p, load_balancer AS lb
WHERE (p.id + lb.slot) % 4 <> 0;

-- At 22:58 Enactor C applied plan 123 everywhere; plan 124 (22:59) is waiting.
INSERT INTO endpoint (name, active_plan_id, rollback_plan_id, updated_by, updated_at) VALUES
    ('dynamodb.us-east-1.amazonaws.com',         123, 122, 'enactor-c', '22:58'),
    ('dynamodb-fips.us-east-1.amazonaws.com',    123, 122, 'enactor-c', '22:58'),
    ('dynamodb.us-east-1.api.aws',               123, 122, 'enactor-c', '22:58'),
    ('streams.dynamodb.us-east-1.amazonaws.com', 123, 122, 'enactor-c', '22:58');
