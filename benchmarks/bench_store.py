"""How many statements per second go through WorldStore.execute, guards and all.

Run: `python benchmarks/bench_store.py`. Builds a throwaway world in a temporary folder and
runs 2,000 small statements (half SELECT, half UPDATE, as an Enactor would) five times,
printing the median rate. The per-statement cost is what matters for automation that
advances a simulation every simulated minute: each statement is split, prepared afresh (no
statement cache on role connections, by design), authorized, timed and its rows counted.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from raceday.exercise.model import Role  # noqa: E402
from raceday.store.sqlite_store import WorldStore  # noqa: E402

STATEMENTS = 2_000
RUNS = 5

WORLD_SQL = """
CREATE TABLE plan (id INTEGER PRIMARY KEY, created_at TEXT NOT NULL);
CREATE TABLE endpoint (
    name TEXT PRIMARY KEY,
    active_plan_id INTEGER,
    rollback_plan_id INTEGER REFERENCES plan (id),
    updated_by TEXT,
    updated_at TEXT
);
CREATE TABLE audit (id INTEGER PRIMARY KEY, what TEXT);
CREATE TRIGGER trg_audit AFTER UPDATE ON endpoint BEGIN
    INSERT INTO audit (what) VALUES (new.name);
END;
WITH RECURSIVE g (id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM g WHERE id < 200)
INSERT INTO plan SELECT id, '22:00' FROM g;
INSERT INTO endpoint VALUES
    ('dynamodb.us-east-1.amazonaws.com', 100, 99, 'enactor-c', '22:58'),
    ('dynamodb-fips.us-east-1.amazonaws.com', 100, 99, 'enactor-c', '22:58'),
    ('dynamodb.us-east-1.api.aws', 100, 99, 'enactor-c', '22:58'),
    ('streams.dynamodb.us-east-1.amazonaws.com', 100, 99, 'enactor-c', '22:58');
"""

ROLES = (Role("enactor-b", "Enactor B", write=("endpoint",)),)

SELECT = "SELECT name, active_plan_id FROM endpoint WHERE name = :name"
UPDATE = (
    "UPDATE endpoint SET rollback_plan_id = active_plan_id, active_plan_id = :plan, "
    "updated_by = 'enactor-b', updated_at = :now WHERE name = :name"
)
NAMES = (
    "dynamodb.us-east-1.amazonaws.com",
    "dynamodb-fips.us-east-1.amazonaws.com",
    "dynamodb.us-east-1.api.aws",
    "streams.dynamodb.us-east-1.amazonaws.com",
)


def one_run(store: WorldStore) -> tuple[float, float, float]:
    """Seconds for STATEMENTS mixed statements, then for the same number of reads and writes."""
    plan = 100

    started = time.perf_counter()
    for i in range(STATEMENTS // 2):
        name = NAMES[i % len(NAMES)]
        store.execute("enactor-b", SELECT, {"name": name})
        plan = 100 + (i % 100) + 1
        store.execute("enactor-b", UPDATE, {"name": name, "plan": plan, "now": "23:48"})
    mixed = time.perf_counter() - started

    started = time.perf_counter()
    for i in range(STATEMENTS):
        store.execute("enactor-b", SELECT, {"name": NAMES[i % len(NAMES)]})
    reads = time.perf_counter() - started

    started = time.perf_counter()
    for i in range(STATEMENTS):
        params = {"name": NAMES[i % len(NAMES)], "plan": 100 + (i % 100) + 1, "now": "23:49"}
        store.execute("enactor-b", UPDATE, params)
    writes = time.perf_counter() - started
    return mixed, reads, writes


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "world.db"
        with WorldStore.create(path, WORLD_SQL, ROLES) as store:
            store.execute("enactor-b", SELECT, {"name": NAMES[0]})  # open the role connection
            timings = [one_run(store) for _ in range(RUNS)]
    mixed, reads, writes = (statistics.median(column) for column in zip(*timings, strict=True))
    print(f"WorldStore.execute, median of {RUNS} runs of {STATEMENTS:,} statements each:")
    print(f"  mixed SELECT/UPDATE : {STATEMENTS / mixed:10,.0f} statements/s")
    print(f"  SELECT only         : {STATEMENTS / reads:10,.0f} statements/s")
    print(f"  UPDATE only (+trigger): {STATEMENTS / writes:8,.0f} statements/s")


if __name__ == "__main__":
    main()
