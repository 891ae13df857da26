"""The PostgreSQL store beside SQLite's: statements per second, and a world's build time.

Run: `python benchmarks/bench_postgres.py [--db postgresql://...]` (default: the DSN in
RACEDAY_TEST_PG_DSN, which .ci/run sets). The workload is bench_store.py's: an Enactor's
small SELECTs and UPDATEs (the UPDATE fires the world's audit trigger), through each store's
`execute`, guards and all. Prints medians and the PostgreSQL/SQLite ratio. Without a server
it says so and exits 0.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import NAMES, ROLES, SELECT, UPDATE, WORLD_SQL  # noqa: E402

from raceday.store.postgres.store import PostgresStore  # noqa: E402
from raceday.store.protocol import Store  # noqa: E402
from raceday.store.sqlite_store import StoreError, WorldStore  # noqa: E402

STATEMENTS = 500
RUNS = 5

# The same world in PostgreSQL's dialect (a trigger is a function and a trigger).
PG_WORLD_SQL = (
    WORLD_SQL.replace("CREATE TABLE audit (id INTEGER PRIMARY KEY, what TEXT);",
                      "CREATE TABLE audit (id SERIAL PRIMARY KEY, what TEXT);")
    .replace("""CREATE TRIGGER trg_audit AFTER UPDATE ON endpoint BEGIN
    INSERT INTO audit (what) VALUES (new.name);
END;""", """CREATE FUNCTION trg_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO audit (what) VALUES (new.name); RETURN new; END $$;
CREATE TRIGGER trg_audit AFTER UPDATE ON endpoint FOR EACH ROW EXECUTE FUNCTION trg_audit();""")
)


def rates(store: Store) -> tuple[float, float]:
    """Statements per second: SELECT only, UPDATE only (medians of RUNS runs)."""
    reads, writes = [], []
    for _ in range(RUNS):
        started = time.perf_counter()
        for i in range(STATEMENTS):
            store.execute("enactor-b", SELECT, {"name": NAMES[i % len(NAMES)]})
        reads.append(STATEMENTS / (time.perf_counter() - started))
        started = time.perf_counter()
        for i in range(STATEMENTS):
            params = {"name": NAMES[i % len(NAMES)], "plan": 100 + (i % 100) + 1, "now": "23:49"}
            store.execute("enactor-b", UPDATE, params)
        writes.append(STATEMENTS / (time.perf_counter() - started))
    return statistics.median(reads), statistics.median(writes)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default=os.environ.get("RACEDAY_TEST_PG_DSN"))
    parser.add_argument("--runs", type=int, default=None, help="ignored (run.py passes it on)")
    dsn = parser.parse_args().db
    if not dsn:
        print("no PostgreSQL: pass --db postgresql://... or set RACEDAY_TEST_PG_DSN (skipped)")
        return
    with tempfile.TemporaryDirectory() as folder:
        builds = []
        for n in range(3):
            started = time.perf_counter()
            WorldStore.create(Path(folder) / f"w{n}.db", WORLD_SQL, ROLES).close()
            builds.append(time.perf_counter() - started)
        with WorldStore.create(Path(folder) / "world.db", WORLD_SQL, ROLES) as sqlite:
            sqlite_rates = rates(sqlite)
    pg_builds = []
    try:
        for _ in range(3):
            started = time.perf_counter()
            pg = PostgresStore.create(dsn, PG_WORLD_SQL, ROLES)
            pg_builds.append(time.perf_counter() - started)
            pg.drop()
        pg = PostgresStore.create(dsn, PG_WORLD_SQL, ROLES)
    except StoreError as exc:
        print(f"PostgreSQL not reachable ({exc}): skipped")
        return
    try:
        pg_rates = rates(pg)
    finally:
        pg.drop()
    print(f"execute(), median of {RUNS} runs of {STATEMENTS} statements; build: median of 3")
    print(f"{'':24}{'SQLite':>12}{'PostgreSQL':>12}{'ratio':>8}")
    for label, a, b in (("SELECT (statements/s)", sqlite_rates[0], pg_rates[0]),
                        ("UPDATE+trigger (st./s)", sqlite_rates[1], pg_rates[1])):
        print(f"{label:24}{a:12,.0f}{b:12,.0f}{b / a:8.2f}")
    a, b = statistics.median(builds), statistics.median(pg_builds)
    print(f"{'build a world (ms)':24}{a * 1000:12,.0f}{b * 1000:12,.0f}{b / a:8.2f}")


if __name__ == "__main__":
    main()
