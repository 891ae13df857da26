"""Fixtures: a fresh world schema per test on the server in RACEDAY_TEST_PG_DSN (row cap 20,
time limit 0.5 s), dropped after it; every test here skips when no server is reachable."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pg_fixtures import DSN_VARIABLE, ROLES, WORLD_SQL, dsn

from raceday.store.postgres.store import PostgresStore  # psycopg itself is imported only when used

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="session")
def pg_dsn() -> str:
    found = dsn()
    if found is None:
        pytest.skip(f"no PostgreSQL: set {DSN_VARIABLE} (.ci/run starts a server and sets it)")
    try:
        import psycopg
    except ImportError:
        pytest.skip("psycopg is not installed (pip install -e '.[test]')")
    try:
        psycopg.connect(found, connect_timeout=3).close()
    except psycopg.Error as exc:
        pytest.skip(f"PostgreSQL at {DSN_VARIABLE} is not reachable: {exc}")
    return found


@pytest.fixture
def pg_store(pg_dsn: str) -> Iterator[PostgresStore]:
    store = PostgresStore.create(pg_dsn, WORLD_SQL, ROLES, row_cap=20, time_limit_s=0.5)
    try:
        yield store
    finally:
        store.drop()
