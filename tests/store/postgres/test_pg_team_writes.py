"""Issue 56 on PostgreSQL: a write the team's trigger makes inside anyone's statement is
named as the team's (`made_writes`), as SQLite's authorizer names it; the world's own
triggers' writes and the statement's own are nobody's."""

from __future__ import annotations

import pytest
from pg_fixtures import one

from raceday.store.postgres.store import PostgresStore
from raceday.store.postgres.team_writes import written_by

pytestmark = pytest.mark.postgres

PLAN_AGAIN = """
CREATE FUNCTION plan_again() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN UPDATE plan SET created_at = '23:59' WHERE id = 1; RETURN NULL; END $$;
CREATE TRIGGER plan_again AFTER UPDATE ON endpoint FOR EACH ROW EXECUTE FUNCTION plan_again()"""


def test_the_worlds_own_trigger_writes_for_nobody(pg_store: PostgresStore) -> None:
    result = one(pg_store, "enactor-a", "UPDATE endpoint SET updated_by = 'x' WHERE name = 'ddb'")
    assert result.ok and set(result.writes) == {"endpoint", "audit"}
    assert result.made_writes == ()


def test_a_team_trigger_writing_another_table_is_named(pg_store: PostgresStore) -> None:
    made = pg_store.execute("responder", PLAN_AGAIN)
    assert all(r.ok for r in made), made
    # enactor B may write plan: the team's trigger, running in its statement, does
    result = one(pg_store, "enactor-b", "UPDATE endpoint SET updated_by = 'x' WHERE name = 'ddb'")
    assert result.ok and set(result.writes) == {"endpoint", "audit", "plan"}
    # the team's trigger wrote plan; audit is the world's own trigger's
    assert result.made_writes == (("plan_again", "plan"),)


def test_a_team_guard_that_writes_nothing_is_nobodys(pg_store: PostgresStore) -> None:
    made = pg_store.execute("responder", """
        CREATE FUNCTION forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'refused'; END $$;
        CREATE TRIGGER forward_only BEFORE UPDATE OF active_plan_id ON endpoint FOR EACH ROW
            WHEN (NEW.active_plan_id < OLD.active_plan_id) EXECUTE FUNCTION forward_only()""")
    assert all(r.ok for r in made), made
    result = one(pg_store, "enactor-a", "UPDATE endpoint SET active_plan_id = 3 WHERE name = 'ddb'")
    assert result.ok and result.made_writes == ()


@pytest.mark.parametrize(("code", "tables"), [
    ("BEGIN UPDATE droplet SET x = 1; INSERT INTO audit VALUES (1); RETURN NULL; END",
     {"droplet", "audit"}),
    ('DELETE FROM ONLY "Work" WHERE true', {"work"}),
    ("INSERT INTO rd_1_world.net_change (id) VALUES (1)", {"net_change"}),
    ("SELECT 1", set()),
])
def test_what_a_trigger_writes_is_read_from_its_text(code: str, tables: set[str]) -> None:
    assert written_by(code) == tables
