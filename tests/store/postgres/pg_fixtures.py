"""A small world in PostgreSQL's dialect, shaped like the SQLite store's fixture, and helpers."""

from __future__ import annotations

import os

from raceday.exercise.model import Role
from raceday.store.postgres.store import PostgresStore
from raceday.store.results import StatementResult

DSN_VARIABLE = "RACEDAY_TEST_PG_DSN"
"""The DSN of a server the tests may build worlds in (.ci/run sets it when it starts one)."""


def dsn() -> str | None:
    return os.environ.get(DSN_VARIABLE) or None


WORLD_SQL = """
CREATE TABLE plan (id INTEGER PRIMARY KEY, created_at TEXT NOT NULL);
CREATE TABLE plan_record (
    plan_id INTEGER NOT NULL REFERENCES plan (id) ON DELETE CASCADE,
    endpoint TEXT NOT NULL,
    address TEXT NOT NULL,
    weight INTEGER NOT NULL CHECK (weight > 0),
    PRIMARY KEY (plan_id, endpoint, address)
);
CREATE TABLE endpoint (
    name TEXT PRIMARY KEY,
    active_plan_id INTEGER,
    rollback_plan_id INTEGER REFERENCES plan (id),
    updated_by TEXT,
    updated_at TEXT
);
CREATE VIEW dns_answer (endpoint, address, weight) AS
    SELECT e.name, r.address, r.weight FROM endpoint AS e
    JOIN plan_record AS r ON r.plan_id = e.active_plan_id AND r.endpoint = e.name;
CREATE TABLE automation (name TEXT PRIMARY KEY, enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)));
CREATE TABLE audit (id SERIAL PRIMARY KEY, what TEXT);
CREATE TABLE numbers (n INTEGER PRIMARY KEY);
CREATE FUNCTION trg_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO audit (what) VALUES ('endpoint ' || new.name || ' -> ' || new.active_plan_id);
    RETURN new;  -- a semicolon inside dollar quotes does not end the statement
END $$;
CREATE TRIGGER trg_audit AFTER UPDATE ON endpoint FOR EACH ROW EXECUTE FUNCTION trg_audit();
INSERT INTO automation VALUES ('dns-planner', 1), ('dns-enactor', 1);
INSERT INTO plan VALUES (1, '22:55'), (2, '22:57'), (3, '22:59');
INSERT INTO plan_record VALUES
    (1, 'ddb', '192.0.2.11', 10), (2, 'ddb', '192.0.2.12', 10), (3, 'ddb', '192.0.2.13', 10),
    (1, 'fips', '198.51.100.21', 10), (2, 'fips', '198.51.100.22', 10),
    (3, 'fips', '198.51.100.23', 10);
INSERT INTO endpoint VALUES
    ('ddb', 2, 1, 'enactor-c', '22:58'), ('fips', 2, 1, 'enactor-c', '22:58');
INSERT INTO numbers SELECT g FROM generate_series(1, 30) AS g;
"""

ROLES = (
    Role("planner", "Planner", write=("plan", "plan_record")),
    Role(
        "enactor-a",
        "Enactor A",
        read=("plan", "plan_record", "endpoint", "automation", "numbers"),
        write=("endpoint",),
    ),
    Role("enactor-b", "Enactor B", write=("endpoint", "plan")),
    Role(
        "responder",
        "Responder",
        write=(),
        break_glass=("endpoint", "automation", "plan", "plan_record"),
        schema=True,
    ),
)

TABLES = ("plan", "plan_record", "endpoint", "automation", "audit", "numbers")


def one(store: PostgresStore, role: str, sql: str) -> StatementResult:
    """Run a one-statement submission and return its result."""
    results = store.execute(role, sql)
    assert len(results) == 1, results
    return results[0]


def snapshot(store: PostgresStore) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows and the schema, to prove the world is unchanged."""
    _, objects = store.app_query("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY 1, 2")
    world: dict[str, list[tuple[object, ...]]] = {"schema": objects}
    for kind, name, *_ in objects:
        if kind == "table":
            world[str(name)] = store.app_query(f'SELECT * FROM "{name}" ORDER BY 1')[1]
    return world


def on_server(dsn: str, session: str) -> list[str]:
    """The schemas and roles of one raceday world still on the server."""
    import psycopg

    pattern = f"rd\\_{session}\\_%"
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname LIKE %s "
                            "UNION ALL SELECT rolname FROM pg_catalog.pg_roles WHERE rolname LIKE %s",
                            [pattern, pattern]).fetchall()
    return sorted(str(r[0]) for r in rows)
