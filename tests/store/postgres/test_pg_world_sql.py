"""Issue 56: an exercise's PostgreSQL world SQL runs with no more than the world owner's
rights: a DO block in a hostile postgres.yaml once created a role as raceday's login."""

from __future__ import annotations

import psycopg
import pytest
from pg_fixtures import ROLES, WORLD_SQL

from raceday.errors import ExerciseError
from raceday.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres

HOSTILE = WORLD_SQL + """
DO $$ BEGIN EXECUTE 'CREATE ROLE rd_hostile_world_role'; END $$;
"""


def _roles(dsn: str) -> list[str]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        found = [str(r[0]) for r in conn.execute(
            "SELECT rolname FROM pg_catalog.pg_roles WHERE rolname = 'rd_hostile_world_role'")]
        if found:
            conn.execute("DROP ROLE rd_hostile_world_role")
    return found


def test_world_sql_that_makes_a_role_fails_and_makes_none(pg_dsn: str) -> None:
    _roles(pg_dsn)
    with pytest.raises(ExerciseError) as failed:
        PostgresStore.create(pg_dsn, HOSTILE, ROLES, session="hostileworld")
    assert "permission denied to create role" in str(failed.value.problems)
    assert _roles(pg_dsn) == []


def test_the_worlds_objects_are_not_raceday_logins(pg_store: PostgresStore, pg_dsn: str) -> None:
    """What the world SQL made belongs to the world's roles, never to raceday's login: a
    function of its own (SECURITY DEFINER or not) never acts with CREATEROLE."""
    with psycopg.connect(pg_dsn) as conn:
        owners = {str(r[0]) for r in conn.execute(
            "SELECT pg_catalog.pg_get_userbyid(relowner) FROM pg_catalog.pg_class "
            "WHERE relnamespace = %s::regnamespace UNION SELECT pg_catalog.pg_get_userbyid(proowner) "
            "FROM pg_catalog.pg_proc WHERE pronamespace = %s::regnamespace",
            [pg_store.names.world] * 2)}
        me = conn.execute("SELECT current_user").fetchone()
    assert me is not None and me[0] not in owners, owners
