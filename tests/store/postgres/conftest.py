"""Fixtures: a fresh world schema per test on the server in RACEDAY_TEST_PG_DSN (row cap 20,
time limit 0.5 s), dropped after it; every test here skips when no server is reachable."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pg_fixtures import ROLES, WORLD_SQL
from postgres_server import server_or_skip

from raceday.store.postgres.store import PostgresStore  # psycopg itself is imported only when used

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="session")
def pg_dsn() -> str:
    return server_or_skip()


@pytest.fixture
def pg_store(pg_dsn: str) -> Iterator[PostgresStore]:
    store = PostgresStore.create(pg_dsn, WORLD_SQL, ROLES, row_cap=20, time_limit_s=0.5)
    try:
        yield store
    finally:
        store.drop()
