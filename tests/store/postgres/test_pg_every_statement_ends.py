"""Issue 56: every statement ends. A player's PL/pgSQL can catch `query_canceled`, the error
both the server's statement_timeout and the watchdog's cancel raise: past its limit and a
short grace its server process is ended, its locks with it, and the session goes on."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from pg_fixtures import one

from raceday.store.postgres.store import PostgresStore
from raceday.store.results import StatementResult

pytestmark = pytest.mark.postgres

STUBBORN = """DO $$ BEGIN
    LOCK TABLE endpoint IN ACCESS EXCLUSIVE MODE;
    LOOP BEGIN PERFORM pg_sleep(0.1); EXCEPTION WHEN query_canceled THEN NULL; END; END LOOP;
END $$"""


def _locks_on_endpoint(dsn: str, store: PostgresStore) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT count(*) FROM pg_catalog.pg_locks WHERE relation = %s::regclass",
                           [f'"{store.names.world}".endpoint']).fetchone()
    return int(row[0]) if row else -1


def _end_stuck(dsn: str, store: PostgresStore) -> None:
    """What the test does when raceday did not: end the stuck backend, so the world drops."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        for role in store.names.all_roles():
            conn.execute(f'GRANT "{role}_login" TO CURRENT_USER')
        conn.execute("SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity "
                     "WHERE usename LIKE %s", [f"rd\\_{store.session}\\_%"])


def test_a_statement_that_catches_its_cancel_is_ended_and_its_lock_released(
        pg_store: PostgresStore, pg_dsn: str) -> None:
    results: list[StatementResult] = []
    started = time.monotonic()
    running = threading.Thread(target=lambda: results.append(one(pg_store, "enactor-a", STUBBORN)),
                               daemon=True)
    running.start()
    running.join(15)
    if running.is_alive():
        _end_stuck(pg_dsn, pg_store)
        running.join(5)
        pytest.fail("a statement that catches query_canceled ran on past 15 s")
    took = time.monotonic() - started
    (stopped,) = results
    assert stopped.error_kind == "timeout" and "stopped" in (stopped.error or ""), stopped
    assert "\n" not in (stopped.error or "")
    assert took < 6, took
    assert _locks_on_endpoint(pg_dsn, pg_store) == 0
    # the session goes on: the same role, and another that writes the table it had locked
    assert one(pg_store, "enactor-a", "SELECT count(*) FROM endpoint").rows == ((2,),)
    assert one(pg_store, "enactor-b", "UPDATE endpoint SET updated_by = 'b'").ok
