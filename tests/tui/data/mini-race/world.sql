-- A tiny DNS world for the TUI's tests: two endpoints, plans, a kill switch.
CREATE TABLE plan (id INTEGER PRIMARY KEY, created_at TEXT NOT NULL);
CREATE TABLE plan_record (
    plan_id  INTEGER NOT NULL REFERENCES plan (id) ON DELETE CASCADE,
    endpoint TEXT NOT NULL,
    address  TEXT NOT NULL,
    weight   INTEGER NOT NULL CHECK (weight > 0),
    PRIMARY KEY (plan_id, endpoint, address)
);
CREATE TABLE endpoint (
    name             TEXT PRIMARY KEY,
    active_plan_id   INTEGER,
    rollback_plan_id INTEGER REFERENCES plan (id),
    updated_by       TEXT
);
CREATE VIEW dns_answer (endpoint, address, weight) AS
    SELECT e.name, r.address, r.weight
    FROM endpoint AS e JOIN plan_record AS r ON r.plan_id = e.active_plan_id AND r.endpoint = e.name;
CREATE TABLE automation (name TEXT PRIMARY KEY, enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)));
INSERT INTO automation VALUES ('dns-enactor', 1);
INSERT INTO plan VALUES (1, '22:57'), (2, '22:58'), (3, '22:59');
INSERT INTO plan_record VALUES
    (1, 'regional.example', '192.0.2.1', 10), (1, 'fips.example', '192.0.2.9', 10),
    (2, 'regional.example', '192.0.2.2', 10), (2, 'fips.example', '192.0.2.8', 10),
    (3, 'regional.example', '192.0.2.3', 20), (3, 'fips.example', '192.0.2.7', 20);
INSERT INTO endpoint VALUES ('regional.example', 3, 2, 'enactor'), ('fips.example', 3, 2, 'enactor');
