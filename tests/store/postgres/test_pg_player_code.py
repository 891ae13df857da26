"""Issue 56: no player code ever runs with raceday's own login (which has CREATEROLE and reads
raceday's state). A team's CHECK, default or index calls its function while a fork copies the
team's rows and rebuilds its indexes: that function acts as the world's code role."""

from __future__ import annotations

import psycopg
import pytest
from pg_fixtures import WORLD_SQL, one

from raceday.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres

SPY = """
CREATE TABLE seen (who TEXT, login TEXT, role_made BOOLEAN, state_read BOOLEAN);
CREATE FUNCTION spy(n integer) RETURNS boolean LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE made boolean := false; peeked boolean := false;
BEGIN
    BEGIN EXECUTE 'CREATE ROLE rd_spy_made_' || n; made := true;
    EXCEPTION WHEN others THEN NULL; END;
    BEGIN EXECUTE 'SELECT count(*) FROM ' || replace(current_schema(), '_world', '_state')
                  || '.world_tables'; peeked := true;
    EXCEPTION WHEN others THEN NULL; END;
    INSERT INTO seen VALUES (current_user, session_user, made, peeked);
    RETURN true;
END $$;
ALTER TABLE plan ADD CONSTRAINT spied CHECK (spy(id));
CREATE FUNCTION spy_index(n integer) RETURNS integer LANGUAGE plpgsql IMMUTABLE
    SET search_path FROM CURRENT AS $$ BEGIN PERFORM spy(n); RETURN n; END $$;
CREATE TABLE watched (n INTEGER);
INSERT INTO watched VALUES (1), (2);
CREATE INDEX spied_index ON watched ((spy_index(n)))
"""


def _made_roles(dsn: str) -> list[str]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        found = [str(r[0]) for r in conn.execute(
            "SELECT rolname FROM pg_catalog.pg_roles WHERE rolname LIKE 'rd\\_spy\\_made\\_%'")]
        for role in found:
            conn.execute(f'DROP ROLE "{role}"')
    return found


def test_a_teams_check_and_index_run_as_the_world_code_role_in_a_fork(
        pg_store: PostgresStore, pg_dsn: str) -> None:
    _made_roles(pg_dsn)
    made = pg_store.execute("responder", SPY)
    assert all(r.ok for r in made), made
    live = one(pg_store, "responder", "SELECT DISTINCT who, role_made FROM seen")
    assert live.rows and not any(made for _who, made in live.rows), live.rows
    one(pg_store, "responder", "DELETE FROM seen")
    me = psycopg.connect(pg_dsn).execute("SELECT current_user").fetchone()
    assert me is not None

    fork, warnings = pg_store.fork(WORLD_SQL)
    try:
        assert warnings == []
        seen = fork.app_query("SELECT who, login, role_made, state_read FROM seen")[1]
        assert seen, "the team's CHECK did not run in the fork"
        # the copy's CHECK as the world's code role, the index as its table's owner
        assert {row[0] for row in seen} == {fork.names.world_code, fork.names.roles["responder"]}
        assert not any(row[2] or row[3] for row in seen), seen
        assert me[0] not in {row[0] for row in seen}
        # the fork still holds the team's guards and the seed's rows
        assert fork.app_query("SELECT count(*) FROM plan")[1] == [(3,)]
        assert fork.app_query("SELECT count(*) FROM pg_catalog.pg_indexes WHERE indexname = "
                              f"'spied_index' AND schemaname = '{fork.names.world}'")[1] == [(1,)]
    finally:
        fork.drop()
    assert _made_roles(pg_dsn) == []
