"""Rights follow the object, not the name (docs/exercise-format.md, "Rights and the schema").

A role that may change the schema must not get around its own read/write lists: not by
renaming a table, not by a trigger that writes what it may not write, not by a trigger that
copies what it may not read when someone else's statement fires it; and a break-glass change
stays marked whichever way it is made.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from store_fixtures import ROLES, WORLD_SQL, one, snapshot

from raceday.exercise.model import Role
from raceday.store.sqlite_store import WorldStore

# builder may change the schema but may read only some tables and write only `numbers`;
# keeper may read everything and write audit, numbers and endpoint, but not change the schema.
BUILDER = Role("builder", "Builder", read=("plan", "numbers"), write=("numbers",), schema=True)
KEEPER = Role("keeper", "Keeper", write=("audit", "numbers", "endpoint"))
RIGHTS_ROLES = (*ROLES, BUILDER, KEEPER)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[WorldStore]:
    path = tmp_path / "world" / "world.db"
    path.parent.mkdir()
    with WorldStore.create(path, WORLD_SQL, RIGHTS_ROLES, row_cap=50, time_limit_s=1.0) as built:
        built.app_query("INSERT INTO audit (what) VALUES ('the secret')")
        yield built


def refused(store: WorldStore, role: str, sql: str, *needles: str) -> str:
    results = store.execute(role, sql)
    last = results[-1]
    assert last.error_kind == "refused", last
    assert last.error is not None and "\n" not in last.error
    for needle in needles:
        assert needle in last.error, (needle, last.error)
    return last.error


# -- renames ------------------------------------------------------------------------------


def test_a_table_it_may_not_read_cannot_be_renamed_out_of_its_rights(world: WorldStore) -> None:
    before = snapshot(world)
    refused(world, "builder", "ALTER TABLE audit RENAME TO s2", "audit")
    assert snapshot(world) == before
    refused(world, "builder", "SELECT * FROM audit", "may not read table audit")


def test_a_world_table_keeps_its_name_even_for_a_role_that_may_write_it(world: WorldStore) -> None:
    error = refused(world, "builder", "ALTER TABLE numbers RENAME TO n2", "keeps its name")
    assert "DROP numbers" in error  # says how to rebuild instead


def test_a_rename_cannot_hide_a_break_glass_write(world: WorldStore) -> None:
    # B11-rename-unmarked: write `automation` under another name, then rename it back.
    first = one(world, "responder", "UPDATE automation SET enabled = 0")
    assert first.ok and first.break_glass == ("automation",)
    results = world.execute(
        "responder",
        "ALTER TABLE automation RENAME TO automation_x; UPDATE automation_x SET enabled = 1; "
        "ALTER TABLE automation_x RENAME TO automation;",
    )
    assert len(results) == 1 and results[0].error_kind == "refused"
    assert world.app_query("SELECT count(*) FROM automation WHERE enabled = 1")[1] == [(0,)]


def test_the_rebuild_pattern_still_works_and_the_rebuilt_table_keeps_the_rights(world: WorldStore) -> None:
    # B10-team-rights: the schema role rebuilds `automation` with a new CHECK; the planner
    # still may not write it, and every step that changed it is marked break-glass.
    results = world.execute(
        "responder",
        "CREATE TABLE automation_new (name TEXT PRIMARY KEY, enabled INTEGER NOT NULL "
        "CHECK (enabled IN (0, 1)));"
        "INSERT INTO automation_new SELECT * FROM automation;"
        "DROP TABLE automation;"
        "ALTER TABLE automation_new RENAME TO automation;",
    )
    assert [r.error for r in results] == [None] * 4
    assert results[2].break_glass == ("automation",)  # the DROP
    refused(world, "planner", "UPDATE automation SET enabled = 0", "may not write table automation")
    refused(world, "enactor-a", "DELETE FROM automation", "may not write table automation")
    assert one(world, "responder", "UPDATE automation SET enabled = 0").break_glass == ("automation",)


def test_a_table_made_during_play_may_be_renamed(world: WorldStore) -> None:
    results = world.execute("builder", "CREATE TABLE lease (holder TEXT); ALTER TABLE lease RENAME TO lease2")
    assert [r.error for r in results] == [None, None]
    assert one(world, "planner", "INSERT INTO lease2 VALUES ('me')").ok


# -- changing the schema of a table is writing it ----------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "DROP TABLE audit",
        "ALTER TABLE audit ADD COLUMN x TEXT",
        "ALTER TABLE audit RENAME COLUMN what TO why",
        "ALTER TABLE audit DROP COLUMN what",
        "CREATE INDEX audit_what ON audit (what)",
        "CREATE UNIQUE INDEX endpoint_plan ON endpoint (active_plan_id)",
        "CREATE TRIGGER audit_guard BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'no'); END",
        "DROP TRIGGER trg_audit",
    ],
)
def test_schema_changes_to_a_table_it_may_not_write_are_refused(world: WorldStore, sql: str) -> None:
    before = snapshot(world)
    refused(world, "builder", sql, "role builder may not write table")
    assert snapshot(world) == before


def test_schema_changes_to_a_table_it_may_write_are_allowed(world: WorldStore) -> None:
    results = world.execute(
        "builder",
        "CREATE INDEX numbers_n ON numbers (n);"
        "CREATE TRIGGER numbers_guard BEFORE DELETE ON numbers BEGIN SELECT RAISE(ABORT, 'kept'); END;"
        "ALTER TABLE numbers ADD COLUMN note TEXT;",
    )
    assert [r.error for r in results] == [None, None, None]
    assert all(r.break_glass == () for r in results)


def test_a_break_glass_schema_change_is_marked(world: WorldStore) -> None:
    made = one(world, "responder", "CREATE INDEX endpoint_plan ON endpoint (active_plan_id)")
    assert made.ok and made.break_glass == ("endpoint",)


# -- triggers act for the role that made them --------------------------------------------


def test_a_trigger_cannot_write_what_its_maker_may_not_write(world: WorldStore) -> None:
    made = world.execute(
        "builder",
        "CREATE TABLE mine (x);"
        "CREATE TRIGGER mine_hop AFTER INSERT ON mine BEGIN "
        "UPDATE endpoint SET active_plan_id = 3; END;",
    )
    assert [r.error for r in made] == [None, None]
    before = snapshot(world)
    error = refused(world, "builder", "INSERT INTO mine VALUES (1)", "mine_hop", "builder", "endpoint")
    assert error.startswith("refused: trigger mine_hop (made by role builder)")
    # Not even when a role that may write endpoint fires it.
    refused(world, "keeper", "INSERT INTO mine VALUES (1)", "made by role builder")
    assert snapshot(world) == before


def test_a_trigger_cannot_copy_what_its_maker_may_not_read_when_another_role_fires_it(
    world: WorldStore,
) -> None:
    made = world.execute(
        "builder",
        "CREATE TABLE loot (what TEXT);"
        "CREATE TRIGGER copy_secret AFTER INSERT ON numbers BEGIN "
        "INSERT INTO loot SELECT what FROM audit; END;",
    )
    assert [r.error for r in made] == [None, None]
    # keeper may read audit and write numbers: its insert fires the trigger, which is refused.
    refused(world, "keeper", "INSERT INTO numbers VALUES (100)", "copy_secret", "may not read table audit")
    assert one(world, "builder", "SELECT count(*) FROM loot").rows == ((0,),)


def test_a_trigger_in_a_when_clause_reads_for_its_maker_too(world: WorldStore) -> None:
    made = world.execute(
        "builder",
        "CREATE TABLE leak (n);"
        "CREATE TRIGGER probe_secret AFTER INSERT ON numbers "
        "WHEN (SELECT count(*) FROM audit WHERE what LIKE 'the%') > 0 "
        "BEGIN INSERT INTO leak VALUES (new.n); END;",
    )
    assert [r.error for r in made] == [None, None]
    refused(world, "keeper", "INSERT INTO numbers VALUES (101)", "probe_secret", "audit")


def test_a_cte_named_like_a_trigger_cannot_widen_reads(world: WorldStore) -> None:
    one(world, "builder", "CREATE TRIGGER spoofed AFTER INSERT ON numbers BEGIN SELECT 1; END")
    refused(world, "builder", "WITH spoofed AS (SELECT * FROM audit) SELECT * FROM spoofed", "audit")
    # The keeper reads audit through the same CTE name: the builder's rights narrow it.
    narrowed = one(world, "keeper", "WITH spoofed AS (SELECT * FROM audit) SELECT * FROM spoofed")
    assert narrowed.error_kind == "refused"
    assert one(world, "keeper", "SELECT what FROM audit").ok


def test_a_trigger_doing_its_makers_break_glass_write_is_marked_for_whoever_fires_it(
    world: WorldStore,
) -> None:
    made = one(
        world,
        "responder",
        "CREATE TRIGGER stop_all AFTER INSERT ON plan BEGIN UPDATE automation SET enabled = 0; END",
    )
    assert made.ok
    fired = one(world, "planner", "INSERT INTO plan VALUES (10, '23:30')")
    assert fired.ok and fired.writes == ("plan", "automation")
    assert fired.break_glass == ("automation",)


def test_triggers_of_the_world_still_run_with_the_firing_role(world: WorldStore) -> None:
    # trg_audit writes audit on every endpoint update; enactor-a may neither read nor write it.
    result = one(world, "enactor-a", "UPDATE endpoint SET active_plan_id = 3 WHERE name = 'ddb'")
    assert result.ok and result.writes == ("endpoint", "audit")
    assert result.break_glass == ()


def test_who_made_a_trigger_is_remembered_when_the_world_is_opened_again(
    world: WorldStore, tmp_path: Path
) -> None:
    world.execute(
        "builder",
        "CREATE TABLE mine (x);"
        "CREATE TRIGGER mine_hop AFTER INSERT ON mine BEGIN UPDATE endpoint SET active_plan_id = 3; END;",
    )
    path = world.path
    world.close()
    with WorldStore.open(path, RIGHTS_ROLES) as again:
        refused(again, "keeper", "INSERT INTO mine VALUES (1)", "made by role builder")


def test_a_failed_create_trigger_records_no_maker(world: WorldStore) -> None:
    failed = one(world, "builder", "CREATE TRIGGER t AFTER INSERT ON nowhere BEGIN SELECT 1; END")
    assert failed.error is not None
    assert world.app_query("SELECT count(*) FROM _raceday_trigger_owner")[1] == [(0,)]
    assert not world.app_query("SELECT 1 FROM sqlite_master WHERE name = 't'")[1]


def test_a_role_can_neither_read_nor_write_the_record_of_makers(world: WorldStore) -> None:
    refused(world, "responder", "SELECT * FROM _raceday_trigger_owner", "internal")
    refused(world, "responder", "DELETE FROM _raceday_trigger_owner", "internal")
    refused(world, "responder", "DROP TABLE _raceday_trigger_owner", "internal")
