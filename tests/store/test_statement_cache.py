"""Role connections keep prepared statements, and the sandbox stays as strong.

SQLite asks the authorizer only when it prepares a statement: a statement taken from the
cache runs unchecked. So what raceday itself runs on a role's connection with the authorizer
waived (the probe's SAVEPOINT, the names it re-reads after DDL, the PRAGMAs set before the
authorizer goes in) must never be reusable by the role, a statement must be checked again
once the world's names change, and a reused statement must report what its first run did.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from store_fixtures import ROLES, WORLD_SQL, one, snapshot

from raceday.exercise.model import Role
from raceday.store.sqlite_store import WorldStore

BUILDER = Role("builder", "Builder", read=("plan", "numbers"), write=("numbers",), schema=True)
KEEPER = Role("keeper", "Keeper", write=("audit", "numbers", "endpoint"))


@pytest.fixture
def world(tmp_path: Path) -> Iterator[WorldStore]:
    path = tmp_path / "world" / "world.db"
    path.parent.mkdir()
    with WorldStore.create(path, WORLD_SQL, (*ROLES, BUILDER, KEEPER), row_cap=50,
                           time_limit_s=1.0) as built:
        yield built


def _refused(world: WorldStore, role: str, sql: str) -> None:
    before = snapshot(world)
    result = one(world, role, sql)
    assert result.error_kind == "refused", result
    assert snapshot(world) == before


def test_the_probes_own_statements_typed_by_the_role_are_refused(world: WorldStore) -> None:
    probed = world.probe("planner", ["UPDATE plan SET created_at = '23:00' WHERE id = 1"])
    assert probed[0].ok and probed[0].rowcount == 1
    for sql in ("SAVEPOINT raceday_probe", "ROLLBACK", "RELEASE raceday_probe"):
        _refused(world, "planner", sql)
    # and the probe changed nothing, though the role's UPDATE may now be cached
    assert one(world, "planner", "SELECT created_at FROM plan WHERE id = 1").rows == (("22:55",),)


def test_what_the_store_reads_after_ddl_typed_by_the_role_is_refused(world: WorldStore) -> None:
    made = one(world, "builder",
               "CREATE TRIGGER mine AFTER INSERT ON numbers BEGIN SELECT 1; END")
    assert made.ok and made.schema_changed
    for sql in ("PRAGMA schema_version", "SELECT name FROM _raceday_world",
                "SELECT name, role FROM _raceday_trigger_owner",
                "SAVEPOINT raceday_ddl", "RELEASE raceday_ddl"):
        _refused(world, "builder", sql)


def test_the_pragmas_set_before_the_authorizer_typed_by_the_role_are_refused(
        world: WorldStore) -> None:
    one(world, "planner", "SELECT 1")  # the connection is open, its PRAGMAs were run on it
    for sql in ("PRAGMA foreign_keys=ON", "PRAGMA trusted_schema=OFF",
                "PRAGMA recursive_triggers=ON", "PRAGMA synchronous=NORMAL",
                "PRAGMA temp_store=MEMORY"):
        _refused(world, "planner", sql)


def test_a_statement_run_again_after_a_trigger_is_made_is_checked_again(
        world: WorldStore) -> None:
    spoof = "WITH spoofed AS (SELECT what FROM audit) SELECT count(*) FROM spoofed"
    assert one(world, "keeper", spoof).ok  # keeper may read audit
    assert one(world, "keeper", spoof).ok
    one(world, "builder", "CREATE TRIGGER spoofed AFTER INSERT ON numbers BEGIN SELECT 1; END")
    # the CTE now carries the name of a trigger the builder made: its rights narrow the read
    assert one(world, "keeper", spoof).error_kind == "refused"


def test_a_write_run_again_after_a_trigger_is_made_fires_it_under_its_makers_rights(
        world: WorldStore) -> None:
    insert = "INSERT INTO numbers VALUES (:n)"
    assert world.execute("keeper", insert, {"n": 100})[0].ok
    one(world, "builder", "CREATE TABLE loot (what TEXT)")
    one(world, "builder", "CREATE TRIGGER copy_secret AFTER INSERT ON numbers BEGIN "
                          "INSERT INTO loot SELECT what FROM audit; END")
    again = world.execute("keeper", insert, {"n": 101})[0]
    assert again.error_kind == "refused" and "copy_secret" in (again.error or "")


@pytest.mark.parametrize("role, sql, writes, break_glass", [
    ("responder", "UPDATE endpoint SET active_plan_id = 3 WHERE name = 'ddb'",
     ("endpoint", "audit"), ("endpoint",)),
    ("enactor-a", "UPDATE endpoint SET active_plan_id = 1 RETURNING name",
     ("endpoint", "audit"), ()),
    ("planner", "DELETE FROM plan WHERE id = 3", ("plan", "plan_record"), ()),
])
def test_a_statement_run_again_reports_what_it_did_the_first_time(
        world: WorldStore, role: str, sql: str, writes: tuple[str, ...],
        break_glass: tuple[str, ...]) -> None:
    runs = [one(world, role, sql) for _ in range(3)]
    first = runs[0]
    assert first.ok and first.writes == writes and first.break_glass == break_glass
    for later in runs[1:]:
        assert (later.writes, later.break_glass, later.reads, later.columns) == \
            (first.writes, first.break_glass, first.reads, first.columns)
        assert later.rowcount is not None


def test_a_statement_that_failed_reports_its_writes_when_it_runs_again(
        world: WorldStore) -> None:
    sql = "UPDATE plan_record SET weight = :w WHERE plan_id = 1"
    failed = world.execute("planner", sql, {"w": 0})[0]
    assert failed.error_kind == "constraint"
    worked = world.execute("planner", sql, {"w": 5})[0]
    assert worked.ok and worked.writes == ("plan_record",) and worked.rowcount == 2


def test_reads_are_reported_the_same_on_every_run(world: WorldStore) -> None:
    sql = "SELECT e.name, r.address FROM endpoint e JOIN plan_record r ON r.plan_id = e.active_plan_id"
    first, again = one(world, "enactor-a", sql), one(world, "enactor-a", sql)
    assert first.reads == again.reads == ("endpoint", "plan_record")


def test_many_different_statements_keep_every_answer_right(world: WorldStore) -> None:
    write = "UPDATE endpoint SET updated_by = 'me' WHERE name = 'fips'"
    assert one(world, "enactor-a", write).writes == ("endpoint", "audit")
    for n in range(700):  # more than the cache and the records kept
        assert one(world, "enactor-a", f"SELECT {n} FROM numbers WHERE n = 1").ok
    assert one(world, "enactor-a", write).writes == ("endpoint", "audit")
    assert one(world, "enactor-a", "SELECT what FROM audit").error_kind == "refused"
