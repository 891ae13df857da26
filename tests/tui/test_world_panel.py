"""The world panel of a world of many endpoints: what is wrong first, then a count."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from raceday.engine.snapshot import ANSWERS_SHOWN, WorldPlan, read_store_world
from raceday.exercise.model import Exercise
from raceday.store.sqlite_store import WorldStore
from raceday.tui.widgets.world import Alarms, render_compact, render_world

MORE = """
WITH RECURSIVE n (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 399)
INSERT INTO endpoint (name, active_plan_id, rollback_plan_id, updated_by, updated_at)
SELECT printf('svc-%04d.example', i), 123, 122, 'enactor-c', '22:58' FROM n;
INSERT INTO plan_record (plan_id, endpoint, address, weight)
SELECT 123, e.name, '10.9.9.' || (e.rowid % 200), 10 FROM endpoint AS e
WHERE e.name LIKE 'svc-%';
"""


def shown(flagship: Exercise, tmp_path: Path, broken: str) -> tuple[str, str, int, int]:
    store = WorldStore.create(tmp_path / "world.db", flagship.world_sql + MORE, flagship.roles)
    try:
        if broken:
            store.app_query(f"UPDATE endpoint SET active_plan_id = 1 WHERE {broken}")
        plan = WorldPlan.for_exercise(flagship, store.tables(), onboarding=True)
        world = read_store_world(store, plan)
    finally:
        store.close()
    assert world.answers is not None and len(world.answers) <= ANSWERS_SHOWN
    console = Console(width=60, record=True, file=io.StringIO())
    console.print(render_world(world, Alarms()))
    return (console.export_text(), render_compact(world, Alarms()).plain,
            world.answers_total, world.answers_empty)


def test_a_healthy_world_of_many_lists_a_few_then_counts(flagship: Exercise,
                                                         tmp_path: Path) -> None:
    text, compact, total, empty = shown(flagship, tmp_path, "")
    assert (total, empty) == (404, 0)
    assert "dynamodb.us-east-1.amazonaws.com" in text  # the first ones, in the query's order
    assert f"and {404 - ANSWERS_SHOWN:,} more endpoints" in text
    assert "all 404 answer" in compact


def test_the_empty_answers_come_first_however_far_down(flagship: Exercise,
                                                      tmp_path: Path) -> None:
    text, compact, total, empty = shown(
        flagship, tmp_path, "name IN ('svc-0398.example', 'svc-0399.example')")
    assert (total, empty) == (404, 2)
    lines = text.splitlines()
    assert "svc-0398.example" in lines[1] and "svc-0399.example" in lines[3]
    assert text.count("EMPTY") == 2
    assert "402 of 404 answer" in compact and "svc-0399.example: EMPTY" in compact


def test_more_empty_answers_than_the_panel_names_are_counted(flagship: Exercise,
                                                             tmp_path: Path) -> None:
    text, compact, total, empty = shown(flagship, tmp_path, "name LIKE 'svc-00%'")
    assert (total, empty) == (404, 100)
    assert text.count("EMPTY") == ANSWERS_SHOWN
    assert f"and {100 - ANSWERS_SHOWN} more empty" in compact
