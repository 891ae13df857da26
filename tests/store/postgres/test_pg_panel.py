"""The flagship's world panel on PostgreSQL: its `count` query runs there as it is and counts
what the whole answer counts, the empty answers first."""

from __future__ import annotations

import dataclasses

import pytest

from raceday.engine.load import load_named_exercise
from raceday.engine.snapshot import ANSWERS_SHOWN, WorldPlan, WorldView, read_store_world
from raceday.exercise.postgres import for_postgres
from raceday.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres

MORE = """
INSERT INTO endpoint (name, active_plan_id, rollback_plan_id, updated_by, updated_at)
SELECT format('svc-%s.example', lpad(i::text, 4, '0')), 123, 122, 'enactor-c', '22:58'
FROM generate_series(0, 399) AS i;
INSERT INTO plan_record (plan_id, endpoint, address, weight)
SELECT 123, e.name, '10.9.9.' || (row_number() OVER (ORDER BY e.name) % 200), 10
FROM endpoint AS e WHERE e.name LIKE 'svc-%';
"""


@pytest.mark.parametrize("broken, empties", [
    ("", 0), ("name IN ('svc-0398.example', 'svc-0399.example')", 2),
    ("name = 'dynamodb.us-east-1.amazonaws.com'", 1)])
def test_the_count_shows_what_counting_the_whole_answer_shows(pg_dsn: str, broken: str,
                                                              empties: int) -> None:
    flagship = for_postgres(load_named_exercise("dynamodb-dns-race"))
    item = next(i for i in flagship.panel if i.show == "answers")
    assert item.count and "rowid" not in item.sql  # the variant's own order, the same count
    whole = dataclasses.replace(flagship, panel=tuple(
        dataclasses.replace(i, count="") for i in flagship.panel))
    empty = f"UPDATE endpoint SET active_plan_id = 1 WHERE {broken};" if broken else ""
    store = PostgresStore.create(pg_dsn, flagship.world_sql + MORE + empty, flagship.roles)
    try:
        views: list[WorldView] = []
        for exercise in (flagship, whole):
            plan = WorldPlan.for_exercise(exercise, store.tables(), onboarding=True)
            views.append(read_store_world(store, plan))
    finally:
        store.drop()
    counted, summed = views
    assert counted.error is None and summed.error is None
    assert counted.answers is not None and summed.answers is not None
    assert len(counted.answers) <= ANSWERS_SHOWN
    assert (counted.answers_total, counted.answers_empty) == (
        summed.answers_total, summed.answers_empty)
    assert counted.answers_total == 404 and counted.answers_empty == empties
    assert sorted(a.endpoint for a in counted.answers) == sorted(
        a.endpoint for a in summed.answers)
