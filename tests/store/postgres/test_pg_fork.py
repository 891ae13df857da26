"""A copy of the team's world with the seed's rows: what the end-of-night replay plays on."""

from __future__ import annotations

import pytest
from pg_fixtures import WORLD_SQL, one

from raceday.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres


def test_a_fork_keeps_the_teams_guards_and_tables_with_the_seed_rows(pg_store: PostgresStore) -> None:
    hardened = pg_store.execute("responder", """
        ALTER TABLE plan_record ADD CONSTRAINT real_address CHECK (length(btrim(address)) > 0);
        CREATE FUNCTION forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'refused: older than the plan in service'; END $$;
        CREATE TRIGGER forward_only BEFORE UPDATE OF active_plan_id ON endpoint FOR EACH ROW
            WHEN (NEW.active_plan_id < OLD.active_plan_id) EXECUTE FUNCTION forward_only();
        CREATE TABLE lease (holder TEXT PRIMARY KEY, token SERIAL);
        INSERT INTO lease (holder) VALUES ('enactor-a')""")
    assert all(r.ok for r in hardened), hardened
    assert one(pg_store, "planner", "INSERT INTO plan VALUES (9, '23:30')").ok
    assert one(pg_store, "enactor-b", "UPDATE endpoint SET active_plan_id = 3 WHERE name = 'ddb'").ok

    fork, warnings = pg_store.fork(WORLD_SQL)
    try:
        assert warnings == []
        # the seed's rows, not tonight's; the team's own table keeps its rows
        assert fork.app_query("SELECT id FROM plan ORDER BY id")[1] == [(1,), (2,), (3,)]
        assert fork.app_query("SELECT active_plan_id FROM endpoint WHERE name = 'ddb'")[1] == [(2,)]
        assert fork.app_query("SELECT holder FROM lease")[1] == [("enactor-a",)]
        # the team's guards hold, the roles' rights too, the world's own trigger still acts
        backwards = one(fork, "enactor-a", "UPDATE endpoint SET active_plan_id = 1 WHERE name = 'ddb'")
        assert backwards.error_kind == "constraint" and "older than" in (backwards.error or "")
        blank = one(fork, "planner", "INSERT INTO plan_record VALUES (1, 'x', ' ', 10)")
        assert blank.error_kind == "constraint"
        assert one(fork, "enactor-a", "SELECT * FROM audit").error_kind == "refused"
        forward = one(fork, "enactor-a", "UPDATE endpoint SET active_plan_id = 3 WHERE name = 'ddb'")
        assert forward.ok and set(forward.writes) == {"endpoint", "audit"}
        token = one(fork, "responder", "INSERT INTO lease (holder) VALUES ('b') RETURNING token")
        assert token.rows == ((2,),)  # the team's sequence goes on from its rows
        # and it is a copy: the live world did not move
        assert pg_store.app_query("SELECT count(*) FROM lease")[1] == [(1,)]
        assert pg_store.app_query("SELECT count(*) FROM plan")[1] == [(4,)]
    finally:
        fork.drop()


def test_seed_rows_the_teams_schema_refuses_are_warnings(pg_store: PostgresStore) -> None:
    assert one(pg_store, "responder", "DELETE FROM plan_record WHERE weight = 10").ok
    assert one(pg_store, "responder", "ALTER TABLE plan_record ADD CONSTRAINT heavy CHECK (weight > 50)").ok
    fork, warnings = pg_store.fork(WORLD_SQL)
    try:
        assert any("plan_record" in w and "heavy" in w for w in warnings), warnings
        assert one(fork, "planner", "SELECT count(*) FROM plan").rows == ((3,),)
    finally:
        fork.drop()


def test_worlds_forked_from_one_reading_are_alike_and_keep_no_later_change(
        pg_store: PostgresStore) -> None:
    # a replay reads the team's schema once (pg_dump) and forks every night's world from it
    assert one(pg_store, "responder",
               "ALTER TABLE plan_record ADD CONSTRAINT real_address CHECK (length(btrim(address)) > 0)").ok
    source = pg_store.fork_source()
    assert one(pg_store, "responder", "CREATE TABLE later (id INTEGER)").ok
    forks = [pg_store.fork(WORLD_SQL, source=source)[0] for _ in range(2)]
    try:
        for fork in forks:
            blank = one(fork, "planner", "INSERT INTO plan_record VALUES (1, 'x', ' ', 10)")
            assert blank.error_kind == "constraint"
            assert "later" not in {t.name for t in fork.tables()}
            assert fork.app_query("SELECT id FROM plan ORDER BY id")[1] == [(1,), (2,), (3,)]
        # another world's reading is refused, not forked under the wrong names
        with pytest.raises(ValueError, match="fork source"):
            forks[0].fork(WORLD_SQL, source=source)
    finally:
        for fork in forks:
            fork.drop()
