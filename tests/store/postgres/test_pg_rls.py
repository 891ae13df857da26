"""Issue 56: the checker cannot be blinded. A team's row-level security policy once showed the
checker's login an empty `endpoint`, live and in every forked night."""

from __future__ import annotations

import psycopg
import pytest
from pg_fixtures import WORLD_SQL, one

from raceday.store.base import StoreError
from raceday.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres

POLICY = "CREATE POLICY p ON endpoint USING (current_user NOT LIKE '%\\_check')"
ENABLE = "ALTER TABLE endpoint ENABLE ROW LEVEL SECURITY"


def _policies(dsn: str, world: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT count(*) FROM pg_catalog.pg_policy p JOIN pg_catalog.pg_class c "
                           "ON c.oid = p.polrelid WHERE c.relnamespace = %s::regnamespace",
                           [world]).fetchone()
    return int(row[0]) if row else -1


@pytest.mark.parametrize("sql", [POLICY, ENABLE, "ALTER TABLE endpoint FORCE ROW LEVEL SECURITY"])
def test_a_player_may_not_turn_row_level_security_on(pg_store: PostgresStore, sql: str) -> None:
    refused = one(pg_store, "responder", sql)
    assert refused.error_kind == "refused" and "row-level security" in (refused.error or "")
    assert "\n" not in (refused.error or "")


def test_a_policy_made_inside_code_is_dropped_and_the_checker_sees_every_row(
        pg_store: PostgresStore, pg_dsn: str) -> None:
    hidden = one(pg_store, "responder", "DO $$ BEGIN EXECUTE $q$" + POLICY + "$q$; "
                 "EXECUTE $q$" + ENABLE + "$q$; END $$")
    assert hidden.ok, hidden
    assert pg_store.app_query("SELECT count(*) FROM endpoint")[1] == [(2,)]
    assert _policies(pg_dsn, pg_store.names.world) == 0


def test_a_policy_raceday_did_not_see_fails_the_check_closed_and_no_fork_keeps_it(
        pg_store: PostgresStore, pg_dsn: str) -> None:
    table = f'"{pg_store.names.world}".endpoint'
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # as if made behind raceday's back
        conn.execute(POLICY.replace("ON endpoint", f"ON {table}"))
        conn.execute(ENABLE.replace("endpoint", table))
    with pytest.raises(StoreError):  # an error, read as the harm: never an empty answer
        pg_store.app_query("SELECT count(*) FROM endpoint")
    fork, _warnings = pg_store.fork(WORLD_SQL)
    try:
        assert fork.app_query("SELECT count(*) FROM endpoint")[1] == [(2,)]
        assert _policies(pg_dsn, fork.names.world) == 0
    finally:
        fork.drop()
