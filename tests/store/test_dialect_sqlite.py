"""Splitting a submission into statements, and the small looks at SQL text the sandbox takes."""

from __future__ import annotations

import pytest

from raceday.store.dialect.sqlite import (
    called_functions,
    first_keyword,
    is_blank,
    split_statements,
    statement_pieces,
)
from raceday.store.sqltext import statement_at, statement_spans


def test_splits_in_order() -> None:
    assert split_statements("SELECT 1; SELECT 2;\nUPDATE t SET x = 1") == [
        "SELECT 1;",
        "SELECT 2;",
        "UPDATE t SET x = 1",
    ]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 'a;b'; SELECT 2",
        'SELECT "odd;name" FROM t; SELECT 2',
        "SELECT [odd;name] FROM t; SELECT 2",
        "SELECT `odd;name` FROM t; SELECT 2",
        "SELECT 1 /* ; */ ; SELECT 2",
        "SELECT 1 -- ;\n; SELECT 2",
        "SELECT 'it''s; fine'; SELECT 2",
    ],
)
def test_semicolons_inside_strings_names_and_comments_do_not_split(sql: str) -> None:
    assert len(split_statements(sql)) == 2


def test_trigger_body_stays_whole() -> None:
    trigger = (
        "CREATE TRIGGER guard BEFORE UPDATE ON endpoint BEGIN\n"
        "  SELECT RAISE(ABORT, 'stale; plan') WHERE new.active_plan_id < old.active_plan_id;\n"
        "  INSERT INTO audit (what) VALUES ('x');\n"
        "END;"
    )
    assert split_statements(trigger + "\nSELECT 1") == [trigger, "SELECT 1"]


@pytest.mark.parametrize("sql", ["", "   ", ";", ";;\n;", "-- just a comment", "/* c */ ; -- d"])
def test_blank_and_comment_only_submissions_have_no_statements(sql: str) -> None:
    assert split_statements(sql) == []
    assert is_blank(sql)


def test_trailing_comment_is_dropped_and_leading_comment_kept() -> None:
    assert split_statements("-- check\nSELECT 1; -- done") == ["-- check\nSELECT 1;"]


def test_incomplete_tail_is_kept_for_sqlite_to_report() -> None:
    assert split_statements("SELECT 1; SELECT 'unterminated") == [
        "SELECT 1;",
        "SELECT 'unterminated",
    ]
    assert split_statements("CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1;") == [
        "CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1;"
    ]


def test_first_keyword_skips_comments() -> None:
    assert first_keyword("  -- hi\n/* x */ vacuum into 'x'") == "VACUUM"
    assert first_keyword("with c as (select 1) update t set x = 1") == "WITH"
    assert first_keyword("-- nothing") == ""


def test_called_functions_sees_calls_not_strings_or_comments() -> None:
    sql = "SELECT Printf('%d', 1), \"format\"(x), 'printf(' -- printf(\n, upper (y) FROM t"
    assert called_functions(sql) == {"printf", "format", "upper"}


def test_pieces_say_where_each_statement_sits() -> None:
    text = "  -- first\n  SELECT 1;\n\n/* two */ UPDATE t SET x = ';';  SELECT"
    pieces = statement_pieces(text)
    assert [p.sql for p in pieces] == split_statements(text)
    assert [text[p.start : p.end] for p in pieces] == [p.sql for p in pieces]
    assert [p.line for p in pieces] == [2, 4, 4]
    assert [p.body for p in pieces] == ["SELECT 1;", "UPDATE t SET x = ';';", "SELECT"]


def test_the_editor_splits_as_the_store_does() -> None:
    text = "SELECT 1;\nSELECT 'a;b';\n-- note\nSELECT 3"
    assert [s.sql for s in statement_spans(text)] == split_statements(text)
    assert statement_at(text, text.index("'a")) == "SELECT 'a;b';"
    assert statement_at(text, len(text)) == "-- note\nSELECT 3"


def test_completion_never_offers_a_function_the_sandbox_refuses() -> None:
    from raceday.store.authorizer import FORBIDDEN_FUNCTIONS
    from raceday.store.sqltext import FUNCTIONS, complete

    assert not set(FUNCTIONS) & FORBIDDEN_FUNCTIONS
    assert "printf" not in complete("pri", (), {}).choices
    assert complete("pri", (), {}).insert in ("", "mary", "MARY")


def test_f5_in_a_postgresql_function_body_runs_the_whole_create_function() -> None:
    """A PL/pgSQL guard's body holds semicolons; F5 inside it must send the whole CREATE,
    not `END $$ LANGUAGE plpgsql` alone (which PostgreSQL refuses)."""
    text = ("SELECT 1;\n"
            "CREATE FUNCTION refuse_older() RETURNS trigger AS $body$\n"
            "BEGIN\n  IF NEW.active_plan_id < OLD.active_plan_id THEN RAISE EXCEPTION 'older';"
            " END IF;\n  RETURN NEW;\nEND $body$ LANGUAGE plpgsql;\n"
            "SELECT 2")
    chosen = statement_at(text, text.index("RETURN NEW"))
    assert chosen.startswith("CREATE FUNCTION") and chosen.endswith("LANGUAGE plpgsql;")
    assert [s.sql for s in statement_spans(text)][::2] == ["SELECT 1;", "SELECT 2"]
