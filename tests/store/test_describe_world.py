"""describe_world: the world's schema without a store, as WorldStore.tables() gives it."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_fixtures import ROLES, WORLD_SQL

from raceday.errors import ExerciseError
from raceday.store.sqlite_store import WorldStore
from raceday.store.sqlite_world import describe_world

EXERCISES = Path(__file__).resolve().parents[2] / "exercises"
WORLDS = sorted(EXERCISES.glob("*/world.sql"))


def test_describes_the_fixture_world() -> None:
    infos = {info.name: info for info in describe_world(WORLD_SQL)}
    assert set(infos) == {
        "audit", "automation", "dns_answer", "endpoint", "numbers", "plan", "plan_record"
    }
    assert infos["dns_answer"].kind == "view"
    assert infos["dns_answer"].sql.startswith("CREATE VIEW dns_answer")
    assert [c.name for c in infos["dns_answer"].columns] == ["endpoint", "address", "weight"]
    plan = infos["plan"]
    assert plan.kind == "table" and plan.sql.startswith("CREATE TABLE plan")
    assert [(c.name, c.type, c.notnull, c.pk) for c in plan.columns] == [
        ("id", "INTEGER", False, True),
        ("created_at", "TEXT", True, False),
    ]
    assert infos["endpoint"].triggers == ("trg_audit",)
    assert infos["audit"].triggers == ()


@pytest.mark.parametrize("world", WORLDS, ids=lambda p: p.parent.name)
def test_same_as_the_tables_of_a_built_world(world: Path, tmp_path: Path) -> None:
    sql = world.read_text(encoding="utf-8")
    with WorldStore.create(tmp_path / "world.db", sql, ROLES) as store:
        assert describe_world(sql) == store.tables()


def test_same_as_the_tables_of_the_fixture_world(tmp_path: Path) -> None:
    with WorldStore.create(tmp_path / "world.db", WORLD_SQL, ROLES) as store:
        assert describe_world(WORLD_SQL) == store.tables()


def test_hides_sqlite_and_raceday_tables() -> None:
    sql = (
        "CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, x);"
        "INSERT INTO t (x) VALUES (1);"
        "CREATE TABLE _raceday_mine (x);"
    )
    assert [info.name for info in describe_world(sql)] == ["t"]


def test_empty_world() -> None:
    assert describe_world("") == []
    assert describe_world("-- nothing yet\n") == []


def test_a_failing_world_is_an_exercise_error() -> None:
    with pytest.raises(ExerciseError) as info:
        describe_world("CREATE TABLE t (x); INSERT INTO nope VALUES (1);")
    assert info.value.problems == ["world SQL failed: no such table: nope"]


def test_attach_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.db"
    with pytest.raises(ExerciseError) as info:
        describe_world(f"ATTACH DATABASE '{target}' AS other; CREATE TABLE other.t (x);")
    assert "ATTACH and DETACH are not allowed" in info.value.problems[0]
    assert not target.exists()


def test_a_runaway_world_stops_at_the_time_limit() -> None:
    runaway = (
        "CREATE TABLE n (x);"
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
        "INSERT INTO n SELECT x FROM c;"
    )
    with pytest.raises(ExerciseError) as info:
        describe_world(runaway, time_limit_s=0.2)
    assert "took longer than 0.2 s" in info.value.problems[0]


def test_foreign_keys_and_triggers_are_described() -> None:
    world = (
        "CREATE TABLE plan (id INTEGER PRIMARY KEY);\n"
        "CREATE TABLE pair (a INT, b INT, PRIMARY KEY (a, b));\n"
        "CREATE TABLE endpoint (name TEXT, plan_id INT REFERENCES plan, a INT, b INT,\n"
        "  FOREIGN KEY (a, b) REFERENCES pair (a, b));\n"
        "CREATE TRIGGER keep AFTER DELETE ON Endpoint BEGIN SELECT 1; END;\n"
        "CREATE TRIGGER also AFTER UPDATE ON endpoint BEGIN SELECT 1; END;\n"
    )
    infos = {info.name: info for info in describe_world(world)}
    endpoint = infos["endpoint"]
    assert {(fk.columns, fk.other_table, fk.other_columns) for fk in endpoint.foreign_keys} == {
        (("plan_id",), "plan", ("id",)),
        (("a", "b"), "pair", ("a", "b")),
    }
    assert endpoint.triggers == ("also", "keep")
    assert infos["plan"].foreign_keys == () and infos["plan"].triggers == ()
