"""The world panel of a world of many endpoints: what is wrong first, then a count."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest
from rich.console import Console

from raceday.engine.snapshot import ANSWERS_SHOWN, WorldPlan, read_store_world
from raceday.exercise.model import Exercise
from raceday.store.sqlite_store import WorldStore
from raceday.tui.widgets.world import COMPACT_SHOWN, WIDE_SHOWN, Alarms, render_compact, render_world

MORE = """
WITH RECURSIVE n (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 399)
INSERT INTO endpoint (name, active_plan_id, rollback_plan_id, updated_by, updated_at)
SELECT printf('svc-%04d.example', i), 123, 122, 'enactor-c', '22:58' FROM n;
INSERT INTO plan_record (plan_id, endpoint, address, weight)
SELECT 123, e.name, '10.9.9.' || (e.rowid % 200), 10 FROM endpoint AS e
WHERE e.name LIKE 'svc-%';
"""


def shown(flagship: Exercise, tmp_path: Path, broken: str, *,
          count: str | None = None) -> tuple[str, str, int, int]:
    """The panel of the flagship's world with 400 more endpoints (`broken` ones empty); its
    answers item counted by `count` when given ("": counted over the whole answer)."""
    if count is not None:
        flagship = dataclasses.replace(flagship, panel=tuple(
            dataclasses.replace(i, count=count) if i.show == "answers" else i
            for i in flagship.panel))
    db = tmp_path / f"world-{len(list(tmp_path.iterdir()))}.db"
    store = WorldStore.create(db, flagship.world_sql + MORE, flagship.roles)
    try:
        if broken:
            store.app_query(f"UPDATE endpoint SET active_plan_id = 1 WHERE {broken}")
        plan = WorldPlan.for_exercise(flagship, store.tables(), onboarding=True)
        world = read_store_world(store, plan)
    finally:
        store.close()
    assert world.error is None
    assert world.answers is not None and len(world.answers) <= ANSWERS_SHOWN
    console = Console(width=60, record=True, file=io.StringIO())
    console.print(render_world(world, Alarms()))
    return (console.export_text(), render_compact(world, Alarms()).plain,
            world.answers_total, world.answers_empty)


def test_a_healthy_world_of_many_lists_a_few_then_counts(flagship: Exercise,
                                                         tmp_path: Path) -> None:
    text, compact, total, empty = shown(flagship, tmp_path, "")
    assert (total, empty) == (404, 0)
    lines = text.splitlines()
    assert lines[1].strip() == "✓ all 404 answer"  # the count first, then the first ones
    assert "dynamodb.us-east-1.amazonaws.com" in lines[2]  # in the query's order
    assert text.count("✓ ") == 1 + WIDE_SHOWN
    assert f"and {404 - WIDE_SHOWN:,} more endpoints" in text
    assert "dns-planner" in text  # the switches below stay within a few lines
    assert len(lines) <= 24
    assert "all 404 answer" in compact


def test_the_empty_answers_come_first_however_far_down(flagship: Exercise,
                                                      tmp_path: Path) -> None:
    text, compact, total, empty = shown(
        flagship, tmp_path, "name IN ('svc-0398.example', 'svc-0399.example')")
    assert (total, empty) == (404, 2)
    lines = text.splitlines()
    assert lines[1].strip() == "✗ 2 of 404 answer nothing"
    assert "svc-0398.example" in lines[2] and "svc-0399.example" in lines[4]
    assert text.count("EMPTY") == 2
    assert "402 of 404 answer" in compact and "svc-0399.example: EMPTY" in compact


def test_more_empty_answers_than_the_panel_names_are_counted(flagship: Exercise,
                                                             tmp_path: Path) -> None:
    text, compact, total, empty = shown(flagship, tmp_path, "name LIKE 'svc-00%'")
    assert (total, empty) == (404, 100)
    assert "✗ 100 of 404 answer nothing" in text
    assert text.count("EMPTY") == WIDE_SHOWN
    assert f"and {100 - COMPACT_SHOWN} more empty" in compact
    assert compact.count(": EMPTY") == COMPACT_SHOWN and "dns-planner" in compact


@pytest.mark.parametrize("broken", [
    "", "name IN ('svc-0398.example', 'svc-0399.example')", "name LIKE 'svc-00%'",
    "name = 'dynamodb.us-east-1.amazonaws.com'", "name LIKE 'svc-02%' OR name LIKE 'dynamo%'"])
def test_the_exercises_count_shows_what_counting_the_whole_answer_shows(
        flagship: Exercise, tmp_path: Path, broken: str) -> None:
    """The same endpoints named and counted (the empty ones in the answer's order, not by
    name as the whole answer's count finds them)."""
    assert any(i.count for i in flagship.panel)  # the flagship counts its own answers
    text, compact, total, empty = shown(flagship, tmp_path, broken)
    whole_text, whole_compact, whole_total, whole_empty = shown(flagship, tmp_path, broken,
                                                                count="")
    assert (total, empty) == (whole_total, whole_empty)
    assert sorted(text.splitlines()) == sorted(whole_text.splitlines())
    assert sorted(compact.split()) == sorted(whole_compact.split())


def test_a_count_of_the_wrong_shape_is_a_one_line_problem_on_the_panel(
        flagship: Exercise, tmp_path: Path) -> None:
    odd = dataclasses.replace(flagship, panel=tuple(
        dataclasses.replace(i, count="SELECT count(*) FROM endpoint") if i.show == "answers"
        else i for i in flagship.panel))
    store = WorldStore.create(tmp_path / "world.db", odd.world_sql + MORE, odd.roles)
    try:
        world = read_store_world(store, WorldPlan.for_exercise(odd, store.tables(),
                                                               onboarding=True))
    finally:
        store.close()
    assert world.error == ("the panel's count query gave 1 row(s) of 1 column(s), not one row "
                           "of two (names, empty)")
    console = Console(width=60, record=True, file=io.StringIO())
    console.print(render_world(world, Alarms()))
    assert "world: the panel's count query gave 1 row(s)" in console.export_text()


def test_a_world_that_fits_shows_every_answer_and_no_count(flagship: Exercise,
                                                           tmp_path: Path) -> None:
    store = WorldStore.create(tmp_path / "world.db", flagship.world_sql, flagship.roles)
    try:
        store.app_query("UPDATE endpoint SET active_plan_id = 1 WHERE rowid = 3")
        world = read_store_world(store, WorldPlan.for_exercise(flagship, store.tables(),
                                                               onboarding=True))
    finally:
        store.close()
    console = Console(width=60, record=True, file=io.StringIO())
    console.print(render_world(world, Alarms()))
    lines = console.export_text().splitlines()
    assert [line[:3] for line in lines[1:8:2]] == ["✓ d", "✓ d", "✗ d", "✓ s"]  # its order
    assert "answer" not in console.export_text().replace("nothing answers", "")
    assert "more endpoint" not in console.export_text()
