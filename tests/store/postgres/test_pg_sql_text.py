"""PostgreSQL's SQL text as raceday cuts it (no server needed), and psycopg loaded only on use."""

from __future__ import annotations

import subprocess
import sys

import pytest

from raceday.store.dialect import postgres as pgsql


@pytest.mark.parametrize("text, pieces", [
    ("SELECT 1; SELECT 2", ["SELECT 1;", "SELECT 2"]),
    ("CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$; SELECT f()",
     ["CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$;", "SELECT f()"]),
    ("SELECT $tag$ a; $$ b; $tag$; SELECT 2", ["SELECT $tag$ a; $$ b; $tag$;", "SELECT 2"]),
    ("SELECT E'it\\'s; fine'; SELECT 2", ["SELECT E'it\\'s; fine';", "SELECT 2"]),
    ("SELECT 'a''; b'; SELECT 2", ["SELECT 'a''; b';", "SELECT 2"]),
    ("SELECT /* a /* nested; */ still; */ 1; SELECT 2",
     ["SELECT /* a /* nested; */ still; */ 1;", "SELECT 2"]),
    ("SELECT 1 -- a; comment\n; ;  -- only a comment;\n", ["SELECT 1 -- a; comment\n;"]),
    ('SELECT "odd;name" FROM t; SELECT 2', ['SELECT "odd;name" FROM t;', "SELECT 2"]),
])
def test_a_submission_splits_where_postgresql_ends_a_statement(text: str, pieces: list[str]) -> None:
    assert pgsql.split(text) == pieces


def test_named_parameters_become_psycopgs_and_casts_and_percent_stay() -> None:
    query, values = pgsql.bind("SELECT :a::int, '50%', :b, ':c' FROM t WHERE x = :a", {"a": 1, "b": "x"})
    assert query == "SELECT %s::int, '50%%', %s, ':c' FROM t WHERE x = %s"
    assert values == [1, "x", 1]
    with pytest.raises(pgsql.MissingParameter):
        pgsql.bind("SELECT :nope", {})


@pytest.mark.parametrize("sql, target", [
    ("UPDATE endpoint SET x = 1", "endpoint"),
    ('DELETE FROM "Plan" WHERE id = 1', "Plan"),
    ("INSERT INTO rd_x_world.audit (what) VALUES ('a')", "audit"),
    ("UPDATE ONLY plan SET id = 2", "plan"),
    ("SELECT * FROM plan", None),
    ("WITH d AS (DELETE FROM plan RETURNING *) SELECT * FROM d", None),
])
def test_the_table_a_plain_write_names(sql: str, target: str | None) -> None:
    assert pgsql.dml_target(sql) == target


@pytest.mark.parametrize("sql, query", [
    ("SELECT 1", True), ("  -- hi\n select 1", True), ("VALUES (1)", True), ("TABLE plan", True),
    ("WITH a AS (SELECT 1) SELECT * FROM a", True),
    ("WITH d AS (DELETE FROM plan RETURNING *) SELECT * FROM d", False),
    ("SELECT * INTO copy FROM plan", False), ("SELECT (SELECT 1) AS into_x", True),
    ("UPDATE plan SET id = 1 RETURNING id", False), ("EXPLAIN SELECT 1", False),
])
def test_what_a_server_side_cursor_can_hold(sql: str, query: bool) -> None:
    assert pgsql.is_query(sql) is query


def test_sqlite_users_never_load_psycopg() -> None:
    code = ("import sys, raceday.cli, raceday.store, raceday.engine.headless, "
            "raceday.store.postgres.store; print('psycopg' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
