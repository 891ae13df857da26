"""A round of the exercise's checks asked in one exchange with the server: each answer the
same as asked alone, a broken check's error its own, and nothing the checks do outlives them."""

from __future__ import annotations

import pytest

from raceday.errors import RacedayError
from raceday.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres

CHECKS = [
    "SELECT name FROM endpoint WHERE active_plan_id IS NULL ORDER BY name",
    "SELECT count(*) AS plans FROM plan",
    "SELECT endpoint, count(*) FROM dns_answer GROUP BY endpoint ORDER BY endpoint",
    "SELECT 'a;b' AS text, '50%' AS share",  # a semicolon and a percent sign in literals
]


def test_checks_asked_together_answer_as_each_asked_alone(pg_store: PostgresStore) -> None:
    alone = [pg_store.app_query(sql) for sql in CHECKS]
    assert pg_store.app_queries(CHECKS) == alone
    assert alone[3] == (("text", "share"), [("a;b", "50%")])


def test_a_broken_check_gives_its_own_error_and_the_others_their_answers(
        pg_store: PostgresStore) -> None:
    broken = [*CHECKS[:2], "SELECT retired_at FROM plan", *CHECKS[2:]]  # no such column
    answers = pg_store.app_queries(broken)
    assert answers[:2] + answers[3:] == [pg_store.app_query(sql) for sql in CHECKS]
    assert isinstance(answers[2], RacedayError)
    assert "retired_at" in str(answers[2])
    assert pg_store.app_query("SELECT 1")[1] == [(1,)]  # the checker's connection goes on


def test_checks_cannot_write_nor_leave_settings_behind(pg_store: PostgresStore) -> None:
    sneaky = ["SELECT pg_catalog.set_config('search_path', 'pg_catalog', false)",
              "SELECT count(*) FROM plan"]
    assert pg_store.app_queries(sneaky)[1] == pg_store.app_query("SELECT count(*) FROM plan")
    writes = pg_store.app_queries(["SELECT count(*) FROM plan",
                                   "WITH gone AS (DELETE FROM plan RETURNING id) "
                                   "SELECT count(*) FROM gone"])
    assert isinstance(writes[1], RacedayError)  # a read-only transaction
    assert pg_store.app_query("SELECT count(*) FROM plan")[1] == writes[0][1]  # type: ignore[index]


def test_a_check_of_two_statements_is_asked_alone(pg_store: PostgresStore) -> None:
    two = "SELECT 1 AS one; SELECT 2 AS two"
    assert pg_store.app_queries([two, "SELECT 3 AS three"])[1] == (("three",), [(3,)])
