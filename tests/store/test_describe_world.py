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
    assert info.value.problems == ["world SQL failed: line 1: no such table: nope"]


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


TRICKY_WORLD = """
CREATE TABLE host (region TEXT, id INTEGER, name TEXT NOT NULL, PRIMARY KEY (id, region));
CREATE TABLE rack (id INTEGER PRIMARY KEY, label);
CREATE TABLE plain (x);
CREATE TABLE "Odd name" (id INTEGER PRIMARY KEY, "with space" TEXT);
CREATE TABLE server (
    id INTEGER PRIMARY KEY,
    rack INTEGER REFERENCES rack,
    host_id INTEGER, host_region TEXT,
    twin INTEGER REFERENCES server (id),
    odd INTEGER REFERENCES "Odd name" ("id"),
    loose INTEGER REFERENCES plain,
    FOREIGN KEY (host_region, host_id) REFERENCES host (region, id),
    FOREIGN KEY (host_id, host_region) REFERENCES host
);
CREATE VIEW racked AS SELECT s.id, r.label FROM server AS s JOIN rack AS r ON r.id = s.rack;
CREATE TRIGGER z_after AFTER INSERT ON Server BEGIN SELECT 1; END;
CREATE TRIGGER a_before BEFORE DELETE ON server BEGIN SELECT 1; END;
CREATE TRIGGER on_view INSTEAD OF INSERT ON racked BEGIN SELECT 1; END;
"""


def test_reads_the_schema_as_sqlite_utils_does() -> None:
    """The tables are read with the PRAGMAs sqlite-utils runs (it took 100 ms to import on
    the way to the first play screen); what they say must be what it says: compound and
    implicit foreign keys, a view, triggers on a table named in another case, odd names."""
    import sqlite3

    from sqlite_utils.db import Database, Table

    from raceday.store.results import ColumnInfo, ForeignKeyInfo, TableInfo

    conn = sqlite3.connect(":memory:")
    conn.executescript(TRICKY_WORLD)
    db = Database(conn, recursive_triggers=False, execute_plugins=False)
    triggers: dict[str, list[str]] = {}
    for trigger in db.triggers:
        triggers.setdefault(trigger.table.lower(), []).append(trigger.name)
    objects = [("table", db.table(n)) for n in db.table_names()] + \
        [("view", db.view(n)) for n in db.view_names()]
    expected = [
        TableInfo(
            name=item.name, kind=kind,  # type: ignore[arg-type]
            columns=tuple(ColumnInfo(name=c.name, type=c.type or "", notnull=bool(c.notnull),
                                     pk=bool(c.is_pk)) for c in item.columns),
            sql=item.schema or "",
            triggers=tuple(sorted(triggers.get(item.name.lower(), ()))),
            foreign_keys=tuple(
                ForeignKeyInfo(tuple(fk.columns), fk.other_table, tuple(fk.other_columns))
                for fk in item.foreign_keys) if isinstance(item, Table) else ())
        for kind, item in sorted(objects, key=lambda o: o[1].name)]
    from raceday.store.sqlite_world import describe_tables

    got = describe_tables(conn)
    assert got == expected
    server = next(t for t in got if t.name == "server")
    assert ForeignKeyInfo(("host_id", "host_region"), "host", ("id", "region")) \
        in server.foreign_keys  # the other table's key in its declared order
    assert ForeignKeyInfo(("rack",), "rack", ("id",)) in server.foreign_keys
    assert server.triggers == ("a_before", "z_after")
