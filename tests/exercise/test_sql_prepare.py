"""SQL is compiled against the world, never run; the world's own errors have lines."""

from __future__ import annotations

from raceday.store.dialect.sqlite import is_blank, statement_pieces
from raceday.store.prepare import check_sql, prepare_each

WORLD = """\
-- world
CREATE TABLE plan (id INTEGER PRIMARY KEY, created_at INTEGER);
CREATE TABLE endpoint (name TEXT PRIMARY KEY, active_plan_id INTEGER);

CREATE TRIGGER no_delete BEFORE DELETE ON plan BEGIN
  SELECT RAISE(ABORT, 'no; never');
END;
INSERT INTO plan VALUES (1, 0); INSERT INTO plan VALUES (2, 5);
"""


def test_split_statements_keeps_lines_and_trigger_bodies() -> None:
    pieces = statement_pieces(WORLD)
    assert [piece.line for piece in pieces] == [2, 3, 5, 8, 8]
    assert pieces[2].sql.endswith("END;")
    assert all(WORLD[piece.start : piece.end] == piece.sql for piece in pieces)


def test_blank() -> None:
    assert is_blank("  -- only a comment\n /* and this */ ;\n")
    assert not is_blank("SELECT 1 -- comment")


def test_good_sql_prepares_and_nothing_runs() -> None:
    items = [
        ("delete", "DELETE FROM plan"),
        ("apply", "UPDATE endpoint SET active_plan_id = :plan WHERE name = :name"),
        ("two", "SELECT * FROM plan; SELECT :now;"),
        ("ddl", "CREATE TABLE lease (holder TEXT)"),
    ]
    result = prepare_each(WORLD, items)
    assert result.world_error is None
    assert result.errors == []
    assert [item.parameters for item in result.items] == [(), ("plan", "name"), ("now",), ()]


def test_failures_are_labelled() -> None:
    items = [
        ("typo", "SELECT nme FROM endpoint"),
        ("syntax", "SELEC 1"),
        ("table", "SELECT * FROM plans"),
        ("qmark", "SELECT * FROM plan WHERE id = ?"),
        ("empty", "-- nothing"),
        ("attach", "ATTACH 'x.db' AS x"),
    ]
    assert check_sql(WORLD, items) == [
        ("typo", "no such column: nme"),
        ("syntax", 'near "SELEC": syntax error'),
        ("table", "no such table: plans"),
        ("qmark", "positional parameters (?) are not supported; use names like :plan"),
        ("empty", "no SQL statement"),
        ("attach", "not authorized"),
    ]


def test_world_error_has_its_line_and_stops_the_check() -> None:
    world = WORLD + "\nINSERT INTO plan VALUES (1, 0);\n"
    assert check_sql(world, [("typo", "SELECT nme FROM endpoint")]) == [
        ("world.sql:10", "UNIQUE constraint failed: plan.id")
    ]


def test_world_foreign_keys_are_enforced() -> None:
    world = (
        "CREATE TABLE a (id INTEGER PRIMARY KEY);\n"
        "CREATE TABLE b (a_id INTEGER REFERENCES a(id));\n"
        "INSERT INTO b VALUES (7);\n"
    )
    assert check_sql(world, []) == [("world.sql:3", "FOREIGN KEY constraint failed")]


def test_runaway_world_is_stopped() -> None:
    world = (
        "CREATE TABLE t (x);\n"
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;\n"
    )
    result = prepare_each(world, [], time_limit=0.2)
    assert result.world_error is not None
    line, message = result.world_error
    assert line == 2 and "took longer than 0.2 s" in message
