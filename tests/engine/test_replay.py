"""The replay's world: the team's schema with the exercise's seed data (store/replay_world.py).

Each test builds a "live" world the way play leaves it (the seed, then the team's changes to
schema and data), builds the replay world from it, and reads the result back with plain
sqlite3: which objects exist, which rows they hold, which warnings were given.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from raceday.exercise.model import Role
from raceday.store.replay_world import build_replay_world
from raceday.store.sqlite_store import WorldStore
from raceday.store.sqlite_world import WORLD_TABLE

SEED = """
CREATE TABLE plan (id INTEGER PRIMARY KEY, created_at TEXT NOT NULL);
CREATE TABLE endpoint (
    name TEXT PRIMARY KEY,
    active_plan_id INTEGER,
    rollback_plan_id INTEGER REFERENCES plan (id)
);
CREATE VIEW serving AS SELECT e.name, p.id FROM endpoint AS e JOIN plan AS p ON p.id = e.active_plan_id;
INSERT INTO plan (id, created_at) VALUES (1, '22:00'), (2, '22:02'), (3, '22:04');
INSERT INTO endpoint (name, active_plan_id, rollback_plan_id) VALUES ('east', 3, 2), ('west', 2, 1);
"""

# What play did to the live world before the replay: the night's own writes, which the
# replay must forget (it starts from the seed), and the team's schema, which it must keep.
NIGHT = """
INSERT INTO plan (id, created_at) VALUES (4, '23:00'), (5, '23:02');
UPDATE endpoint SET active_plan_id = 5, rollback_plan_id = 4;
DELETE FROM plan WHERE id = 1;
"""


def make_live(tmp_path: Path, *team: str, night: str = NIGHT) -> Path:
    """A live world: the seed, the night's writes, then the team's statements in order."""
    path = tmp_path / "live.db"
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.executescript(SEED)
        conn.executescript(night)
        for sql in team:
            conn.executescript(sql)
    finally:
        conn.close()
    return path


def build(tmp_path: Path, live: Path, seed: str = SEED) -> tuple[Path, list[str]]:
    path = tmp_path / "replay" / "race.db"
    path.parent.mkdir(exist_ok=True)
    return path, build_replay_world(live, seed, path)


def query(path: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def objects(path: Path) -> set[tuple[str, str]]:
    return set(query(path, "SELECT type, name FROM sqlite_master "
                           "WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"))


# -- the schema is the team's, the data is the seed's ----------------------------------------


def test_the_team_schema_is_rebuilt_with_the_seed_data_not_the_nights(tmp_path: Path) -> None:
    live = make_live(
        tmp_path,
        "CREATE INDEX endpoint_active ON endpoint (active_plan_id)",
        "CREATE VIEW newest AS SELECT max(id) AS id FROM plan",
        """CREATE TRIGGER forward_only BEFORE UPDATE OF active_plan_id ON endpoint
           WHEN NEW.active_plan_id < OLD.active_plan_id
           BEGIN SELECT RAISE(ABORT, 'older than the plan in service'); END""",
    )
    path, warnings = build(tmp_path, live)
    assert warnings == []
    assert objects(path) == objects(live)
    # The seed's rows, not the night's: plan 1 is back, plans 4 and 5 never were.
    assert query(path, "SELECT id FROM plan ORDER BY id") == [(1,), (2,), (3,)]
    assert query(path, "SELECT name, active_plan_id, rollback_plan_id FROM endpoint "
                       "ORDER BY name") == [("east", 3, 2), ("west", 2, 1)]
    # The seed's view and the team's view both work on the rebuilt tables.
    assert query(path, "SELECT name, id FROM serving ORDER BY name") == [("east", 3), ("west", 2)]
    assert query(path, "SELECT id FROM newest") == [(3,)]
    # The team's trigger is there and bites.
    conn = sqlite3.connect(path)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="older than the plan in service"):
            conn.execute("UPDATE endpoint SET active_plan_id = 1 WHERE name = 'east'")
    finally:
        conn.close()
    # The seed's scratch database is gone; the live world was not changed.
    assert sorted(p.name for p in path.parent.iterdir()) == ["race.db"]
    assert query(live, "SELECT id FROM plan ORDER BY id") == [(2,), (3,), (4,), (5,)]


def test_a_rebuilt_table_gets_the_seed_rows_under_its_new_constraints(tmp_path: Path) -> None:
    # The way a team adds a foreign key in SQLite: create, copy, drop, rename.
    live = make_live(tmp_path, """
        DROP VIEW serving;
        CREATE TABLE endpoint_new (
            name TEXT PRIMARY KEY,
            active_plan_id INTEGER REFERENCES plan (id) ON DELETE RESTRICT,
            rollback_plan_id INTEGER REFERENCES plan (id)
        );
        INSERT INTO endpoint_new SELECT * FROM endpoint;
        DROP TABLE endpoint;
        ALTER TABLE endpoint_new RENAME TO endpoint;
        CREATE VIEW serving AS SELECT e.name, p.id FROM endpoint AS e
            JOIN plan AS p ON p.id = e.active_plan_id;
    """)
    path, warnings = build(tmp_path, live)
    assert warnings == []
    assert ("table", "endpoint_new") not in objects(path)
    assert "ON DELETE RESTRICT" in query(
        path, "SELECT sql FROM sqlite_master WHERE name = 'endpoint'")[0][0]
    assert query(path, "SELECT name, active_plan_id FROM endpoint ORDER BY name") == [
        ("east", 3), ("west", 2)]
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA foreign_keys=ON")
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            conn.execute("DELETE FROM plan WHERE id = 3")
    finally:
        conn.close()


def test_tables_the_team_added_keep_their_current_rows(tmp_path: Path) -> None:
    live = make_live(tmp_path, """
        CREATE TABLE lease (name TEXT PRIMARY KEY, holder TEXT, token INTEGER NOT NULL);
        INSERT INTO lease VALUES ('dns', 'enactor-b', 7);
        CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, note TEXT);
        INSERT INTO audit (note) VALUES ('guards in'), ('lease seeded');
    """)
    path, warnings = build(tmp_path, live)
    assert warnings == []
    assert query(path, "SELECT name, holder, token FROM lease") == [("dns", "enactor-b", 7)]
    assert query(path, "SELECT id, note FROM audit ORDER BY id") == [
        (1, "guards in"), (2, "lease seeded")]
    # An AUTOINCREMENT table goes on counting after the rows it kept.
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("INSERT INTO audit (note) VALUES ('replayed')")
        assert conn.execute("SELECT max(id) FROM audit").fetchone() == (3,)
    finally:
        conn.close()


def test_a_column_the_team_added_takes_its_default_on_the_seed_rows(tmp_path: Path) -> None:
    live = make_live(
        tmp_path,
        "ALTER TABLE plan ADD COLUMN deleted_at INTEGER",
        "ALTER TABLE plan ADD COLUMN state TEXT NOT NULL DEFAULT 'live'",
        "ALTER TABLE plan ADD COLUMN label TEXT GENERATED ALWAYS AS ('plan ' || id) VIRTUAL",
        "UPDATE plan SET deleted_at = 60, state = 'soft-deleted' WHERE id = 2",
    )
    path, warnings = build(tmp_path, live)
    assert warnings == []
    # The night's soft delete is forgotten with the rest of the night's data.
    assert query(path, "SELECT id, deleted_at, state, label FROM plan ORDER BY id") == [
        (1, None, "live", "plan 1"), (2, None, "live", "plan 2"), (3, None, "live", "plan 3")]


def test_a_trigger_that_would_refuse_the_seed_rows_is_created_after_them(
    tmp_path: Path,
) -> None:
    live = make_live(tmp_path, """
        CREATE TRIGGER no_new_plans BEFORE INSERT ON plan
        BEGIN SELECT RAISE(ABORT, 'plans are frozen'); END;
        CREATE TRIGGER endpoint_stamp AFTER INSERT ON endpoint
        BEGIN UPDATE plan SET created_at = 'touched' WHERE id = NEW.active_plan_id; END;
    """)
    path, warnings = build(tmp_path, live)
    assert warnings == []
    assert query(path, "SELECT count(*) FROM plan") == [(3,)]
    # Loading the seed did not fire the team's triggers either.
    assert query(path, "SELECT count(*) FROM plan WHERE created_at = 'touched'") == [(0,)]
    conn = sqlite3.connect(path)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="plans are frozen"):
            conn.execute("INSERT INTO plan (id, created_at) VALUES (9, '23:59')")
    finally:
        conn.close()


# -- what does not fit is said, never hidden --------------------------------------------------


def test_seed_rows_a_check_refuses_leave_the_table_empty_with_a_warning(tmp_path: Path) -> None:
    live = make_live(tmp_path, """
        DROP VIEW serving;
        CREATE TABLE plan_new (id INTEGER PRIMARY KEY CHECK (id > 1), created_at TEXT NOT NULL);
        INSERT INTO plan_new SELECT * FROM plan;
        DROP TABLE plan;
        ALTER TABLE plan_new RENAME TO plan;
    """)  # the live world lost plan 1 tonight, so the CHECK fit; the seed still has it
    path, warnings = build(tmp_path, live)
    assert len(warnings) == 2, warnings
    assert warnings[0].startswith("table plan: the seed rows do not fit the team's schema")
    assert "CHECK constraint failed" in warnings[0]
    # With plan empty, the endpoints' rollback pointers dangle: said too.
    assert warnings[1] == "seed rows break the team's foreign keys in endpoint"
    assert query(path, "SELECT count(*) FROM plan") == [(0,)]
    assert query(path, "SELECT count(*) FROM endpoint") == [(2,)]


def test_a_team_table_pointing_at_tonights_rows_breaks_a_foreign_key(tmp_path: Path) -> None:
    # The fence table was seeded from tonight's plans; the replay's plans stop at 3.
    live = make_live(tmp_path, """
        CREATE TABLE fence (endpoint TEXT PRIMARY KEY, plan_id INTEGER REFERENCES plan (id));
        INSERT INTO fence SELECT name, active_plan_id FROM endpoint;
    """)
    path, warnings = build(tmp_path, live)
    assert warnings == ["seed rows break the team's foreign keys in fence"]
    assert query(path, "SELECT endpoint, plan_id FROM fence ORDER BY endpoint") == [
        ("east", 5), ("west", 5)]


def test_a_unique_index_the_seed_breaks_is_left_out_with_a_warning(tmp_path: Path) -> None:
    # Built on tonight's data (east serves 3, west 2); in the seed both serve plan 3.
    live = make_live(tmp_path, "CREATE UNIQUE INDEX one_active ON endpoint (active_plan_id)",
                     night="")
    seed = SEED.replace("('west', 2, 1)", "('west', 3, 1)")
    path, warnings = build(tmp_path, live, seed)
    assert len(warnings) == 1
    assert warnings[0].startswith("index one_active could not be rebuilt")
    assert "UNIQUE constraint failed" in warnings[0]
    assert ("index", "one_active") not in objects(path)
    assert query(path, "SELECT count(*) FROM endpoint") == [(2,)]


def test_an_existing_file_is_never_overwritten(tmp_path: Path) -> None:
    live = make_live(tmp_path)
    path = tmp_path / "race.db"
    path.write_bytes(b"not a world")
    with pytest.raises(FileExistsError):
        build_replay_world(live, SEED, path)
    assert path.read_bytes() == b"not a world"


# -- a world the store built ----------------------------------------------------------------


def test_the_record_of_the_original_tables_comes_from_the_live_world(tmp_path: Path) -> None:
    roles = [Role("team", "Team", read=("*",), write=(), schema=True)]
    live = tmp_path / "world.db"
    with WorldStore.create(live, SEED, roles) as store:
        results = store.execute("team", "CREATE TABLE lease (name TEXT PRIMARY KEY, token INT);"
                                        "INSERT INTO lease VALUES ('dns', 1)")
        assert all(r.ok for r in results), results
        copy = tmp_path / "team-now.db"
        store.backup_to(copy)
    path, warnings = build(tmp_path, copy)
    assert warnings == []
    assert query(path, f"SELECT name FROM {WORLD_TABLE} ORDER BY name") == query(
        copy, f"SELECT name FROM {WORLD_TABLE} ORDER BY name")
    # Opened as a world, the original tables are still guarded by role rights, and the
    # team's new table is still open to every role.
    with WorldStore.open(path, roles) as replay:
        refused = replay.execute("team", "UPDATE plan SET created_at = 'x'")
        assert refused[-1].error_kind == "refused"
        taken = replay.execute("team", "UPDATE lease SET token = token + 1")
        assert taken[-1].ok and taken[-1].rowcount == 1
